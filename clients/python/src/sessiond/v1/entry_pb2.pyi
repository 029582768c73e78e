from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ROLE_ASSISTANT: Role
ROLE_TOOL: Role
ROLE_UNSPECIFIED: Role
ROLE_USER: Role

class BranchSummary(_message.Message):
    __slots__ = ["from_id", "summary"]
    FROM_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    from_id: str
    summary: str
    def __init__(self, summary: _Optional[str] = ..., from_id: _Optional[str] = ...) -> None: ...

class Compaction(_message.Message):
    __slots__ = ["replaces_entry_ids", "summary", "tokens_before"]
    REPLACES_ENTRY_IDS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TOKENS_BEFORE_FIELD_NUMBER: _ClassVar[int]
    replaces_entry_ids: _containers.RepeatedScalarFieldContainer[str]
    summary: str
    tokens_before: int
    def __init__(self, summary: _Optional[str] = ..., replaces_entry_ids: _Optional[_Iterable[str]] = ..., tokens_before: _Optional[int] = ...) -> None: ...

class ContentPart(_message.Message):
    __slots__ = ["image", "text", "thinking", "tool_call"]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    THINKING_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    image: ImagePart
    text: str
    thinking: ThinkingPart
    tool_call: ToolCall
    def __init__(self, text: _Optional[str] = ..., thinking: _Optional[_Union[ThinkingPart, _Mapping]] = ..., image: _Optional[_Union[ImagePart, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCall, _Mapping]] = ...) -> None: ...

class Custom(_message.Message):
    __slots__ = ["data", "namespace"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    data: _struct_pb2.Struct
    namespace: str
    def __init__(self, namespace: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Entry(_message.Message):
    __slots__ = ["branch_summary", "compaction", "custom", "id", "label", "leaf", "message", "model_change", "parent_id", "seq", "session_info", "thinking_level_change", "timestamp"]
    BRANCH_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    LEAF_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_CHANGE_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_INFO_FIELD_NUMBER: _ClassVar[int]
    THINKING_LEVEL_CHANGE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    branch_summary: BranchSummary
    compaction: Compaction
    custom: Custom
    id: str
    label: Label
    leaf: Leaf
    message: Message
    model_change: ModelChange
    parent_id: str
    seq: int
    session_info: SessionInfo
    thinking_level_change: ThinkingLevelChange
    timestamp: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., parent_id: _Optional[str] = ..., timestamp: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., seq: _Optional[int] = ..., session_info: _Optional[_Union[SessionInfo, _Mapping]] = ..., message: _Optional[_Union[Message, _Mapping]] = ..., model_change: _Optional[_Union[ModelChange, _Mapping]] = ..., thinking_level_change: _Optional[_Union[ThinkingLevelChange, _Mapping]] = ..., compaction: _Optional[_Union[Compaction, _Mapping]] = ..., branch_summary: _Optional[_Union[BranchSummary, _Mapping]] = ..., label: _Optional[_Union[Label, _Mapping]] = ..., leaf: _Optional[_Union[Leaf, _Mapping]] = ..., custom: _Optional[_Union[Custom, _Mapping]] = ...) -> None: ...

class ForkedFrom(_message.Message):
    __slots__ = ["entry_id", "session_id"]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    entry_id: str
    session_id: str
    def __init__(self, session_id: _Optional[str] = ..., entry_id: _Optional[str] = ...) -> None: ...

class ImagePart(_message.Message):
    __slots__ = ["data", "mime_type"]
    DATA_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    mime_type: str
    def __init__(self, mime_type: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class Label(_message.Message):
    __slots__ = ["label"]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    label: str
    def __init__(self, label: _Optional[str] = ...) -> None: ...

class Leaf(_message.Message):
    __slots__ = ["leaf_id"]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    leaf_id: str
    def __init__(self, leaf_id: _Optional[str] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ["content", "is_error", "metadata", "model", "provider", "role", "stop_reason", "tool_call_id", "tool_name", "usage"]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    content: _containers.RepeatedCompositeFieldContainer[ContentPart]
    is_error: bool
    metadata: _struct_pb2.Struct
    model: str
    provider: str
    role: Role
    stop_reason: str
    tool_call_id: str
    tool_name: str
    usage: Usage
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., content: _Optional[_Iterable[_Union[ContentPart, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., is_error: bool = ..., model: _Optional[str] = ..., provider: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., stop_reason: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ModelChange(_message.Message):
    __slots__ = ["model", "provider"]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    model: str
    provider: str
    def __init__(self, model: _Optional[str] = ..., provider: _Optional[str] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ["agent_type", "created_at", "cwd", "forked_from", "format_version", "metadata", "parent_session_id", "session_id", "spawn_depth", "tags", "title"]
    class TagsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AGENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    FORKED_FROM_FIELD_NUMBER: _ClassVar[int]
    FORMAT_VERSION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SPAWN_DEPTH_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    agent_type: str
    created_at: _timestamp_pb2.Timestamp
    cwd: str
    forked_from: ForkedFrom
    format_version: int
    metadata: _struct_pb2.Struct
    parent_session_id: str
    session_id: str
    spawn_depth: int
    tags: _containers.ScalarMap[str, str]
    title: str
    def __init__(self, session_id: _Optional[str] = ..., title: _Optional[str] = ..., cwd: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., format_version: _Optional[int] = ..., parent_session_id: _Optional[str] = ..., agent_type: _Optional[str] = ..., spawn_depth: _Optional[int] = ..., forked_from: _Optional[_Union[ForkedFrom, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class ThinkingLevelChange(_message.Message):
    __slots__ = ["thinking_level"]
    THINKING_LEVEL_FIELD_NUMBER: _ClassVar[int]
    thinking_level: str
    def __init__(self, thinking_level: _Optional[str] = ...) -> None: ...

class ThinkingPart(_message.Message):
    __slots__ = ["signature", "thinking"]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    THINKING_FIELD_NUMBER: _ClassVar[int]
    signature: str
    thinking: str
    def __init__(self, thinking: _Optional[str] = ..., signature: _Optional[str] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ["arguments", "id", "name"]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    arguments: _struct_pb2.Value
    id: str
    name: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ["cache_read_tokens", "cache_write_tokens", "input_tokens", "output_tokens"]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    cache_read_tokens: int
    cache_write_tokens: int
    input_tokens: int
    output_tokens: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ...) -> None: ...

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
