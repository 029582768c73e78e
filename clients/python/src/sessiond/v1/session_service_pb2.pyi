from google.protobuf import timestamp_pb2 as _timestamp_pb2
from sessiond.v1 import entry_pb2 as _entry_pb2
from sessiond.v1 import session_pb2 as _session_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Iterable as _Iterable, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AppendRequest(_message.Message):
    __slots__ = ["entries", "expected_leaf_id", "expected_seq", "session", "workspace"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_entry_pb2.Entry]
    expected_leaf_id: str
    expected_seq: int
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., entries: _Optional[_Iterable[_Union[_entry_pb2.Entry, _Mapping]]] = ..., expected_leaf_id: _Optional[str] = ..., expected_seq: _Optional[int] = ...) -> None: ...

class AppendResponse(_message.Message):
    __slots__ = ["deduplicated", "entries", "head_seq", "leaf_id"]
    DEDUPLICATED_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    deduplicated: bool
    entries: _containers.RepeatedCompositeFieldContainer[AppendedEntry]
    head_seq: int
    leaf_id: str
    def __init__(self, entries: _Optional[_Iterable[_Union[AppendedEntry, _Mapping]]] = ..., leaf_id: _Optional[str] = ..., head_seq: _Optional[int] = ..., deduplicated: bool = ...) -> None: ...

class AppendedEntry(_message.Message):
    __slots__ = ["id", "parent_id", "seq", "timestamp"]
    ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    id: str
    parent_id: str
    seq: int
    timestamp: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., parent_id: _Optional[str] = ..., seq: _Optional[int] = ..., timestamp: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetEntriesRequest(_message.Message):
    __slots__ = ["after_seq", "limit", "session", "workspace"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    limit: int
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., after_seq: _Optional[int] = ..., limit: _Optional[int] = ...) -> None: ...

class GetEntriesResponse(_message.Message):
    __slots__ = ["entries", "head_seq"]
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[_entry_pb2.Entry]
    head_seq: int
    def __init__(self, entries: _Optional[_Iterable[_Union[_entry_pb2.Entry, _Mapping]]] = ..., head_seq: _Optional[int] = ...) -> None: ...

class GetStateRequest(_message.Message):
    __slots__ = ["at_entry_id", "page_size", "page_token", "session", "view", "workspace"]
    AT_ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    at_entry_id: str
    page_size: int
    page_token: str
    session: str
    view: _session_pb2.View
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., at_entry_id: _Optional[str] = ..., view: _Optional[_Union[_session_pb2.View, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetStateResponse(_message.Message):
    __slots__ = ["next_page_token", "state"]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    next_page_token: str
    state: _session_pb2.SessionState
    def __init__(self, state: _Optional[_Union[_session_pb2.SessionState, _Mapping]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetTreeRequest(_message.Message):
    __slots__ = ["page_size", "page_token", "session", "workspace"]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetTreeResponse(_message.Message):
    __slots__ = ["head_seq", "leaf_id", "next_page_token", "nodes"]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    head_seq: int
    leaf_id: str
    next_page_token: str
    nodes: _containers.RepeatedCompositeFieldContainer[_session_pb2.TreeNode]
    def __init__(self, nodes: _Optional[_Iterable[_Union[_session_pb2.TreeNode, _Mapping]]] = ..., leaf_id: _Optional[str] = ..., head_seq: _Optional[int] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ["head_seq", "time"]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    head_seq: int
    time: _timestamp_pb2.Timestamp
    def __init__(self, head_seq: _Optional[int] = ..., time: _Optional[_Union[_timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ResetRequest(_message.Message):
    __slots__ = ["entry_id", "expected_leaf_id", "expected_seq", "session", "workspace"]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    entry_id: str
    expected_leaf_id: str
    expected_seq: int
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., expected_leaf_id: _Optional[str] = ..., expected_seq: _Optional[int] = ..., entry_id: _Optional[str] = ...) -> None: ...

class ResetResponse(_message.Message):
    __slots__ = ["head_seq", "leaf_entry_id", "leaf_id"]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    LEAF_ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    head_seq: int
    leaf_entry_id: str
    leaf_id: str
    def __init__(self, leaf_id: _Optional[str] = ..., head_seq: _Optional[int] = ..., leaf_entry_id: _Optional[str] = ...) -> None: ...

class RewindRequest(_message.Message):
    __slots__ = ["allow_before_compaction", "entry_id", "expected_leaf_id", "expected_seq", "session", "target", "workspace"]
    ALLOW_BEFORE_COMPACTION_FIELD_NUMBER: _ClassVar[int]
    ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    allow_before_compaction: bool
    entry_id: str
    expected_leaf_id: str
    expected_seq: int
    session: str
    target: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., target: _Optional[str] = ..., allow_before_compaction: bool = ..., expected_leaf_id: _Optional[str] = ..., expected_seq: _Optional[int] = ..., entry_id: _Optional[str] = ...) -> None: ...

class RewindResponse(_message.Message):
    __slots__ = ["head_seq", "leaf_entry_id", "leaf_id"]
    HEAD_SEQ_FIELD_NUMBER: _ClassVar[int]
    LEAF_ENTRY_ID_FIELD_NUMBER: _ClassVar[int]
    LEAF_ID_FIELD_NUMBER: _ClassVar[int]
    head_seq: int
    leaf_entry_id: str
    leaf_id: str
    def __init__(self, leaf_id: _Optional[str] = ..., head_seq: _Optional[int] = ..., leaf_entry_id: _Optional[str] = ...) -> None: ...

class WatchEntriesRequest(_message.Message):
    __slots__ = ["after_seq", "session", "workspace"]
    AFTER_SEQ_FIELD_NUMBER: _ClassVar[int]
    SESSION_FIELD_NUMBER: _ClassVar[int]
    WORKSPACE_FIELD_NUMBER: _ClassVar[int]
    after_seq: int
    session: str
    workspace: str
    def __init__(self, workspace: _Optional[str] = ..., session: _Optional[str] = ..., after_seq: _Optional[int] = ...) -> None: ...

class WatchEntriesResponse(_message.Message):
    __slots__ = ["entry", "heartbeat"]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    entry: _entry_pb2.Entry
    heartbeat: Heartbeat
    def __init__(self, entry: _Optional[_Union[_entry_pb2.Entry, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ...) -> None: ...
