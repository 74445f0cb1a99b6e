//! The protobuf field numbers (and enum values) of Perfetto's messages that the trace writes, named, from
//! Perfetto's `protos/perfetto/trace/`: `trace_packet.proto`, `track_event/track_event.proto`,
//! `track_event/track_descriptor.proto`, `track_event/debug_annotation.proto`,
//! `interned_data/interned_data.proto` and `clock_snapshot.proto`.

/// `Trace.packet`.
pub(super) const TRACE_PACKET: u32 = 1;

// TracePacket.
pub(super) const TIMESTAMP: u32 = 8;
pub(super) const TIMESTAMP_CLOCK_ID: u32 = 58;
pub(super) const SEQUENCE_ID: u32 = 10;
pub(super) const SEQUENCE_FLAGS: u32 = 13;
pub(super) const TRACK_EVENT: u32 = 11;
pub(super) const TRACK_DESCRIPTOR: u32 = 60;
pub(super) const INTERNED_DATA: u32 = 12;
pub(super) const DEFAULTS: u32 = 59;
pub(super) const CLOCK_SNAPSHOT: u32 = 6;
/// `SEQ_INCREMENTAL_STATE_CLEARED`.
pub(super) const STATE_CLEARED: u64 = 1;

// TrackEvent.
pub(super) const EV_TYPE: u32 = 9;
pub(super) const EV_NAME_IID: u32 = 10;
pub(super) const EV_NAME: u32 = 23;
pub(super) const EV_CATEGORY_IIDS: u32 = 3;
pub(super) const EV_DEBUG: u32 = 4;
pub(super) const EV_COUNTER_VALUE: u32 = 30;
/// `TrackEvent.double_counter_value` (fixed64).
pub(super) const EV_DOUBLE_COUNTER_VALUE: u32 = 44;
pub(super) const EV_TRACK_UUID: u32 = 11;
/// `TrackEvent.flow_ids` and `terminating_flow_ids` (repeated fixed64).
pub(super) const EV_FLOW_IDS: u32 = 47;
pub(super) const EV_TERMINATING_FLOW_IDS: u32 = 48;
// TrackEvent.Type.
pub(super) const SLICE_BEGIN: u64 = 1;
pub(super) const SLICE_END: u64 = 2;
pub(super) const INSTANT: u64 = 3;
pub(super) const COUNTER: u64 = 4;

// TrackDescriptor.
pub(super) const TD_UUID: u32 = 1;
pub(super) const TD_NAME: u32 = 2;
pub(super) const TD_PROCESS: u32 = 3;
pub(super) const TD_THREAD: u32 = 4;
pub(super) const TD_PARENT_UUID: u32 = 5;
pub(super) const TD_COUNTER: u32 = 8;

// ProcessDescriptor.
pub(super) const PROCESS_PID: u32 = 1;
pub(super) const PROCESS_NAME: u32 = 6;
pub(super) const PROCESS_LABELS: u32 = 8;

// ThreadDescriptor.
pub(super) const THREAD_PID: u32 = 1;
pub(super) const THREAD_TID: u32 = 2;
pub(super) const THREAD_NAME: u32 = 5;

// CounterDescriptor.
pub(super) const COUNTER_UNIT: u32 = 3;
pub(super) const COUNTER_UNIT_NAME: u32 = 6;
/// `CounterDescriptor.Unit.UNIT_SIZE_BYTES`.
pub(super) const UNIT_SIZE_BYTES: u64 = 3;

// InternedData.
pub(super) const INTERNED_CATEGORIES: u32 = 1;
pub(super) const INTERNED_EVENT_NAMES: u32 = 2;
pub(super) const INTERNED_ANNOTATION_NAMES: u32 = 3;
pub(super) const INTERNED_STRING_VALUES: u32 = 29;
// EventCategory, EventName, DebugAnnotationName (`name`) and InternedString (`str`): an entry's fields.
pub(super) const ENTRY_IID: u32 = 1;
pub(super) const ENTRY_TEXT: u32 = 2;

// DebugAnnotation.
pub(super) const ANN_NAME_IID: u32 = 1;
pub(super) const ANN_BOOL: u32 = 2;
pub(super) const ANN_UINT: u32 = 3;
pub(super) const ANN_INT: u32 = 4;
pub(super) const ANN_DOUBLE: u32 = 5;
pub(super) const ANN_STRING: u32 = 6;
pub(super) const ANN_NAME: u32 = 10;
pub(super) const ANN_STRING_IID: u32 = 17;

// ClockSnapshot and ClockSnapshot.Clock.
pub(super) const SNAPSHOT_CLOCK: u32 = 1;
pub(super) const CLOCK_ID: u32 = 1;
pub(super) const CLOCK_TIMESTAMP: u32 = 2;
pub(super) const CLOCK_IS_INCREMENTAL: u32 = 3;
/// `BuiltinClocks.BOOTTIME`, the clock our nanoseconds are given in.
pub(super) const BOOTTIME: u64 = 6;

// TracePacketDefaults and TrackEventDefaults.
pub(super) const DEFAULTS_TIMESTAMP_CLOCK_ID: u32 = 58;
pub(super) const DEFAULTS_TRACK_EVENT: u32 = 11;
pub(super) const EVENT_DEFAULTS_TRACK_UUID: u32 = 11;
