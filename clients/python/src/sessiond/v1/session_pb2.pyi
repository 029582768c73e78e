from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sessiond.v1 import entry_pb2 as _entry_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
ENTRY_KIND_BRANCH_SUMMARY: EntryKind
ENTRY_KIND_COMPACTION: EntryKind
ENTRY_KIND_CUSTOM: EntryKind
ENTRY_KIND_LABEL: EntryKind
ENTRY_KIND_LEAF: EntryKind
ENTRY_KIND_MESSAGE: EntryKind
ENTRY_KIND_MODEL_CHANGE: EntryKind
ENTRY_KIND_SESSION_INFO: EntryKind
ENTRY_KIND_THINKING_LEVEL_CHANGE: EntryKind
ENTRY_KIND_UNSPECIFIED: EntryKind
HEALTH_CORRUPT: Health
HEALTH_OK: Health
HEALTH_UNSPECIFIED: Health
VIEW_CONTEXT: View
VIEW_HISTORY: View
VIEW_UNSPECIFIED: View

class SessionMeta(_message.Message):
    __slots__ = ["agent_type", "created_at", "cwd", "entry_count", "forked_from", "head_seq", "health", "health_detail", "id", "leaf_id", "message_count", "metadata", "parent_session_id", "spawn_depth", "tags", "title", "updated_at", "workspace"]
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
    ENTRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    FORKED_FROM_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    HEALTH_DETAIL_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SPAWN_DEPTH_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    agent_type: str
    created_at: _timestamp_pb2.Timestamp
    cwd: str
    entry_count: int
    forked_from: _entry_pb2.ForkedFrom
    head_seq: int
    health: Health
    health_detail: str
    id: str
    leaf_id: str
    message_count: int
    metadata: _struct_pb2.Struct
    parent_session_id: str
    spawn_depth: int
    tags: _containers.ScalarMap[str, str]
    title: str
    updated_at: _timestamp_pb2.Timestamp
    workspace: str
    def __init__(self, id: _Optional[str] = ..., workspace: _Optional[str] = ..., title: _Optional[str] = ..., cwd: _Optional[str] = ..., created_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., entry_count: _Optional[int] = ..., message_count: _Optional[int] = ..., leaf_id: _Optional[str] = ..., head_seq: _Optional[int] = ..., parent_session_id: _Optional[str] = ..., agent_type: _Optional[str] = ..., spawn_depth: _Optional[int] = ..., forked_from: _Optional[_Union[_entry_pb2.ForkedFrom, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., health: _Optional[_Union[Health, str]] = ..., health_detail: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class SessionState(_message.Message):
    __slots__ = ["compaction_floor_id", "current_leaf_id", "custom", "head_seq", "label", "leaf_id", "messages", "model", "provider", "thinking_level", "title", "view"]
    class CustomEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: _struct_pb2.Struct
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
    COMPACTION_FLOOR_ID_FIELD_NUMBER: _ClassVar[int]
    CURRENT_LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    THINKING_LEVEL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    compaction_floor_id: str
    current_leaf_id: str
    custom: _containers.MessageMap[str, _struct_pb2.Struct]
    head_seq: int
    label: str
    leaf_id: str
    messages: _containers.RepeatedCompositeFieldContainer[StateMessage]
    model: str
    provider: str
    thinking_level: str
    title: str
    view: View
    def __init__(self, messages: _Optional[_Iterable[_Union[StateMessage, _Mapping]]] = ..., model: _Optional[str] = ..., provider: _Optional[str] = ..., thinking_level: _Optional[str] = ..., label: _Optional[str] = ..., title: _Optional[str] = ..., custom: _Optional[_Mapping[str, _struct_pb2.Struct]] = ..., leaf_id: _Optional[str] = ..., compaction_floor_id: _Optional[str] = ..., head_seq: _Optional[int] = ..., view: _Optional[_Union[View, str]] = ..., current_leaf_id: _Optional[str] = ...) -> None: ...

class StateMessage(_message.Message):
    __slots__ = ["entry_id", "message"]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    entry_id: str
    message: _entry_pb2.Message
    def __init__(self, entry_id: _Optional[str] = ..., message: _Optional[_Union[_entry_pb2.Message, _Mapping]] = ...) -> None: ...

class TreeNode(_message.Message):
    __slots__ = ["id", "kind", "label", "leaf_id", "on_current_path", "parent_id", "preview", "role", "seq", "timestamp"]
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    ON_CURRENT_PATH_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    PREVIEW_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: EntryKind
    label: str
    leaf_id: str
    on_current_path: bool
    parent_id: str
    preview: str
    role: _entry_pb2.Role
    seq: int
    timestamp: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., parent_id: _Optional[str] = ..., kind: _Optional[_Union[EntryKind, str]] = ..., seq: _Optional[int] = ..., label: _Optional[str] = ..., on_current_path: bool = ..., role: _Optional[_Union[_entry_pb2.Role, str]] = ..., preview: _Optional[str] = ..., timestamp: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., leaf_id: _Optional[str] = ...) -> None: ...

class View(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class Health(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class EntryKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
