//! The call-tree JSON's fixed-shape rows, each declared once: a lock (the `locks` array), a counter (the
//! `counters` object, by name) and a thread (the `threads` array, besides its tree). Each row type has one
//! table of its fields ([`Field`]: key, how it is read, getter, setter) that the writer
//! (`export/json.rs`, in the order of the keys) and the reader (`json_read/records.rs`, in the table's
//! order: the first field missing or of the wrong kind is the error) both take, as `data/node_figures.rs`
//! is for a node's figures. Adding a figure to one of them: its field in the row's type (`data/`), a line
//! here, `docs/json-schema.md`.

use crate::data::counters::CounterStats;
use crate::data::locks::LockStats;
use crate::data::report::ThreadSummary;

/// A row field's value, as the JSON has it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Cell<'a> {
    /// A whole number.
    Whole(u64),
    /// A number: written as one, or as a string when it is not finite (JSON has no NaN).
    Float(f64),
    /// `true` or `false`.
    Flag(bool),
    /// A string.
    Text(&'a str),
}

/// How the reader takes a field (an error names the field and where it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Read {
    /// A whole number, required.
    Whole,
    /// A whole number that fits 32 bits, required.
    Whole32,
    /// A whole number; absent (a file from before it existed) reads as 0.
    WholeOr0,
    /// A number, or the string of one that is not finite (`"NaN"`, `"inf"`), required.
    Float,
    /// `true` or `false`, required.
    Flag,
    /// A string, required.
    Text,
    /// Written for those who read the file, made of the other fields: a key the reader knows (a value that
    /// is not a scalar is an error) and does not use.
    Derived,
}

/// One field of the row type `T`.
pub(crate) struct Field<T> {
    /// Its JSON key.
    pub key: &'static str,
    pub read: Read,
    /// Its value in a row.
    pub get: for<'a> fn(&'a T) -> Cell<'a>,
    /// Sets it in a row, from a value of the kind `read` reads.
    pub set: fn(&mut T, Cell),
}

impl<T> Field<T> {
    /// A field made of the others (`get`), which the reader skips.
    const fn derived(key: &'static str, get: for<'a> fn(&'a T) -> Cell<'a>) -> Field<T> {
        Field {
            key,
            read: Read::Derived,
            get,
            set: |_, _| {},
        }
    }
}

/// A row field's Rust type, as a [`Cell`].
pub(crate) trait CellType {
    fn cell(&self) -> Cell<'_>;
    /// From a cell of its kind (a default for another kind, which the reader never gives).
    fn from_cell(cell: Cell) -> Self;
}

/// [`CellType`] for `$ty`, which is the [`Cell`] variant `$variant` (through `$to` and back `$from`).
macro_rules! cell_type {
    ($ty:ty, $variant:ident, |$v:ident| $to:expr, |$c:ident| $from:expr) => {
        impl CellType for $ty {
            fn cell(&self) -> Cell<'_> {
                let $v = self;
                Cell::$variant($to)
            }
            fn from_cell(cell: Cell) -> $ty {
                match cell {
                    Cell::$variant($c) => $from,
                    _ => Default::default(),
                }
            }
        }
    };
}

cell_type!(u64, Whole, |v| *v, |c| c);
// The reader has checked the range (`Read::Whole32`).
cell_type!(u32, Whole, |v| u64::from(*v), |c| c as u32);
cell_type!(f64, Float, |v| *v, |c| c);
cell_type!(bool, Flag, |v| *v, |c| c);
cell_type!(String, Text, |v| v, |c| c.to_owned());

/// The field `$key` of a row: its field `$field` if named otherwise, read as `$read`; or made of the
/// others by `$get` (`Derived`).
macro_rules! field {
    ($key:ident: Derived($get:expr)) => {
        Field::derived(stringify!($key), $get)
    };
    ($key:ident: $read:ident) => {
        field!($key = $key: $read)
    };
    ($key:ident = $field:ident: $read:ident) => {
        Field {
            key: stringify!($key),
            read: Read::$read,
            get: |r| CellType::cell(&r.$field),
            set: |r, v| r.$field = CellType::from_cell(v),
        }
    };
}

/// The keys of `fields`, in their order.
const fn keys<T, const N: usize>(fields: &[Field<T>]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = fields[i].key;
        i += 1;
    }
    out
}

/// Declares each row type's table of fields, in the reader's order, and its keys.
macro_rules! rows {
    ($(
        $(#[doc = $doc:literal])*
        $table:ident, $keys:ident: $ty:ty = [
            $( $key:ident $(= $field:ident)?: $read:ident $(($get:expr))? ),* $(,)?
        ];
    )*) => {$(
        $(#[doc = $doc])*
        pub(crate) const $table: &[Field<$ty>] = &[$( field!($key $(= $field)?: $read $(($get))?) ),*];
        /// The table's keys, in its order: what the reader keeps of an object.
        pub(crate) const $keys: [&str; $table.len()] = keys($table);
    )*};
}

rows! {
    /// A lock name's row ([`LockStats`]), an element of `locks`.
    LOCK_FIELDS, LOCK_KEYS: LockStats = [
        name: Text, acquisitions: Whole, contended: Whole, wait_ns: Whole, max_wait_ns: Whole,
        hold_ns: Whole, max_hold_ns: Whole, max_waiters: Whole,
    ];
    /// A counter's row ([`CounterStats`]), a member of `counters` under the counter's name (`mean` is
    /// written, not read).
    COUNTER_FIELDS, COUNTER_KEYS: CounterStats = [
        samples: Whole, last: Float, min: Float, max: Float,
        mean: Derived(|c| Cell::Float(c.mean())), sum: Float,
    ];
    /// A thread's row ([`ThreadSummary`]), an element of `threads`; its `tree` is written and read apart
    /// (after these: every key sorts before `tree`).
    THREAD_FIELDS, THREAD_KEYS: ThreadSummary = [
        index: Whole32, name: Text, main = is_main: Flag, exited: Flag, alive_ns: Whole,
        busy_ns: Whole, calls: Whole, cpu_ns: WholeOr0, dropped: Whole,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value of the kind `read` reads, made of `i` (`None` for a derived field).
    fn value(i: usize, read: Read) -> Option<Cell<'static>> {
        Some(match read {
            Read::Whole | Read::Whole32 | Read::WholeOr0 => Cell::Whole(i as u64 + 1),
            Read::Float => Cell::Float(i as f64 + 0.5),
            Read::Flag => Cell::Flag(i.is_multiple_of(2)),
            Read::Text => Cell::Text(["a", "b"][i % 2]),
            Read::Derived => return None,
        })
    }

    /// Each field of `fields` set to a value of its kind, then read back.
    fn round_trip<T>(fields: &[Field<T>], row: &mut T) {
        for (i, f) in fields.iter().enumerate() {
            if let Some(v) = value(i, f.read) {
                (f.set)(row, v);
            }
        }
        for (i, f) in fields.iter().enumerate() {
            if let Some(v) = value(i, f.read) {
                assert_eq!((f.get)(row), v, "{}", f.key);
            }
        }
    }

    #[test]
    fn every_field_reads_back_what_was_set() {
        round_trip(LOCK_FIELDS, &mut LockStats::new(""));
        round_trip(COUNTER_FIELDS, &mut CounterStats::new(""));
        let tree =
            crate::data::CallTree::new(vec![crate::data::CallNode::new(0, "(root)", 0, 0, None)]);
        let t = crate::data::ThreadSnapshot::new(0, "", tree);
        round_trip(THREAD_FIELDS, &mut ThreadSummary::from_snapshot(t, 0));
        assert_eq!(LOCK_KEYS[0], "name");
        // A thread's tree is written after its fields.
        assert!(THREAD_KEYS.iter().all(|k| *k < "tree"));
    }
}
