from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sessiond.v1 import entry_pb2 as _entry_pb2
from sessiond.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor
SESSION_EVENT_TYPE_CREATED: SessionEventType
SESSION_EVENT_TYPE_DELETED: SessionEventType
SESSION_EVENT_TYPE_UNSPECIFIED: SessionEventType
SESSION_EVENT_TYPE_UPDATED: SessionEventType
SORT_BY_CREATED: SortBy
SORT_BY_UNSPECIFIED: SortBy
SORT_BY_UPDATED: SortBy
SORT_ORDER_NEWEST_FIRST: SortOrder
SORT_ORDER_OLDEST_FIRST: SortOrder
SORT_ORDER_UNSPECIFIED: SortOrder

class CreateSessionRequest(_message.Message):
    __slots__ = ["agent_type", "cwd", "metadata", "parent_session_id", "session_id", "tags", "title", "workspace"]
    class TagsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AGENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CWD_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    agent_type: str
    cwd: str
    metadata: _struct_pb2.Struct
    parent_session_id: str
    session_id: str
    tags: _containers.ScalarMap[str, str]
    title: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., title: _Optional[str] = ..., cwd: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., session_id: _Optional[str] = ..., parent_session_id: _Optional[str] = ..., agent_type: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ["created", "session"]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    created: bool
    session: _session_pb2.SessionMeta
    def __init__(self, session: _Optional[_Union[_session_pb2.SessionMeta, _Mapping]] = ..., created: bool = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ["expected_head_seq", "include_subagents", "session", "workspace"]
    EXPECTED_HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SUBAGENTS_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    expected_head_seq: int
    include_subagents: bool
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., include_subagents: bool = ..., expected_head_seq: _Optional[int] = ...) -> None: ...

class DeleteSessionResponse(_message.Message):
    __slots__ = ["deleted_session_ids"]
    DELETED_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    deleted_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, deleted_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class ForkSessionRequest(_message.Message):
    __slots__ = ["entry", "session", "session_id", "title", "workspace"]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    entry: str
    session: str
    session_id: str
    title: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., entry: _Optional[str] = ..., title: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class ForkSessionResponse(_message.Message):
    __slots__ = ["session"]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.SessionMeta
    def __init__(self, session: _Optional[_Union[_session_pb2.SessionMeta, _Mapping]] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ["session", "workspace"]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ...) -> None: ...

class GetSessionResponse(_message.Message):
    __slots__ = ["session"]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    session: _session_pb2.SessionMeta
    def __init__(self, session: _Optional[_Union[_session_pb2.SessionMeta, _Mapping]] = ...) -> None: ...

class ImportSessionRequest(_message.Message):
    __slots__ = ["entries", "session_id", "workspace"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_entry_pb2.Entry]
    session_id: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session_id: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[_entry_pb2.Entry, _Mapping]]] = ...) -> None: ...

class ImportSessionResponse(_message.Message):
    __slots__ = ["created", "session"]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    created: bool
    session: _session_pb2.SessionMeta
    def __init__(self, session: _Optional[_Union[_session_pb2.SessionMeta, _Mapping]] = ..., created: bool = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ["filter", "order", "page_size", "page_token", "parent_session_id", "sort_by", "workspace"]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SORT_BY_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    filter: SessionFilter
    order: SortOrder
    page_size: int
    page_token: str
    parent_session_id: str
    sort_by: SortBy
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., parent_session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., order: _Optional[_Union[SortOrder, str]] = ..., filter: _Optional[_Union[SessionFilter, _Mapping]] = ..., sort_by: _Optional[_Union[SortBy, str]] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ["next_page_token", "sessions"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    sessions: _containers.RepeatedCompositeFieldContainer[_session_pb2.SessionMeta]
    def __init__(self, sessions: _Optional[_Iterable[_Union[_session_pb2.SessionMeta, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class SearchEntriesRequest(_message.Message):
    __slots__ = ["filter", "order", "page_size", "page_token", "parent_session_id", "query", "workspace"]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PARENT_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    filter: SessionFilter
    order: SortOrder
    page_size: int
    page_token: str
    parent_session_id: str
    query: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., query: _Optional[str] = ..., filter: _Optional[_Union[SessionFilter, _Mapping]] = ..., parent_session_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., order: _Optional[_Union[SortOrder, str]] = ...) -> None: ...

class SearchEntriesResponse(_message.Message):
    __slots__ = ["hits", "next_page_token", "partial_session_ids"]
    HITS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    next_page_token: str
    partial_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., partial_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ["entry_id", "role", "seq", "session_id", "session_title", "snippet", "timestamp"]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_TITLE_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    entry_id: str
    role: _entry_pb2.Role
    seq: int
    session_id: str
    session_title: str
    snippet: str
    timestamp: _timestamp_pb2.Timestamp
    def __init__(self, session_id: _Optional[str] = ..., session_title: _Optional[str] = ..., entry_id: _Optional[str] = ..., seq: _Optional[int] = ..., role: _Optional[_Union[_entry_pb2.Role, str]] = ..., timestamp: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., snippet: _Optional[str] = ...) -> None: ...

class SessionFilter(_message.Message):
    __slots__ = ["agent_type", "created_after", "created_before", "tags", "title_contains", "updated_after", "updated_before"]
    class TagsEntry(_message.Message):
        __slots__ = ["key", "value"]
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AGENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    CREATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    TITLE_CONTAINS_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AFTER_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BEFORE_FIELD_NUMBER: _ClassVar[int]
    agent_type: str
    created_after: _timestamp_pb2.Timestamp
    created_before: _timestamp_pb2.Timestamp
    tags: _containers.ScalarMap[str, str]
    title_contains: str
    updated_after: _timestamp_pb2.Timestamp
    updated_before: _timestamp_pb2.Timestamp
    def __init__(self, title_contains: _Optional[str] = ..., tags: _Optional[_Mapping[str, str]] = ..., created_after: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., created_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_after: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., updated_before: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ..., agent_type: _Optional[str] = ...) -> None: ...

class WatchSessionsRequest(_message.Message):
    __slots__ = ["after_cursor", "workspace"]
    AFTER_CURSOR_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    after_cursor: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., after_cursor: _Optional[str] = ...) -> None: ...

class WatchSessionsResponse(_message.Message):
    __slots__ = ["cursor", "session", "session_id", "time", "type"]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    cursor: str
    session: _session_pb2.SessionMeta
    session_id: str
    time: _timestamp_pb2.Timestamp
    type: SessionEventType
    def __init__(self, type: _Optional[_Union[SessionEventType, str]] = ..., session_id: _Optional[str] = ..., session: _Optional[_Union[_session_pb2.SessionMeta, _Mapping]] = ..., cursor: _Optional[str] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SortOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SortBy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []

class SessionEventType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = []
