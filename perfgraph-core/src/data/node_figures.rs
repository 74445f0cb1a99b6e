//! Every figure of a [`CallNode`] (counts, times, memory, async and allocation figures) besides its
//! latency histogram and its CPU figures ([`CpuFigures`], listed in `data/figures.rs`), declared once: the
//! list in the `node_figures!` call below says how two paths' figures combine and when the JSON has it. A
//! merge's sums (plain and checked: `CallNode::add_figures`, `checked_add_figures`), the JSON writer and
//! the JSON reader take every figure from there ([`NODE_FIGURES`]). Adding one: its field in `CallNode`,
//! a line here, and what records and snapshots it (`local/`); the tables that show it.

use crate::data::figures::CpuFigures;
use crate::data::tree::CallNode;

/// How a node figure of two call paths combines (a merge of threads or of processes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Combine {
    /// Summed.
    Sum,
    /// The larger one.
    Max,
}

/// When a node figure is in the JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InJson {
    /// On every node: a reader requires it.
    Always,
    /// On async nodes only ([`CallNode::is_async`]): absent reads as 0.
    Async,
    /// On every node of a run with the counting allocator: absent reads as 0.
    Heap,
}

/// A node figure's value: a count or time (`u64`), or a change that may be negative (`i64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value {
    /// Unsigned.
    U(u64),
    /// Signed.
    I(i64),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::U(v) => v.fmt(f),
            Value::I(v) => v.fmt(f),
        }
    }
}

/// A node figure's type, as the JSON reader reads it.
pub(crate) trait FigureType: Copy {
    /// Whether it is signed.
    const SIGNED: bool;
    /// As a [`Value`].
    fn value(self) -> Value;
    /// From a [`Value`] of its kind (0 for the other kind, which the reader never gives).
    fn from_value(v: Value) -> Self;
    /// `self` and `other` combined (figures of one run, which cannot overflow).
    fn combined(self, other: Self, how: Combine) -> Self;
    /// `self` and `other` combined, `None` on overflow (figures from files).
    fn checked(self, other: Self, how: Combine) -> Option<Self>;
}

/// [`FigureType`] for `$ty`, which is the [`Value`] variant `$variant`.
macro_rules! figure_type {
    ($ty:ty, $variant:ident, $signed:expr) => {
        impl FigureType for $ty {
            const SIGNED: bool = $signed;
            fn value(self) -> Value {
                Value::$variant(self)
            }
            fn from_value(v: Value) -> $ty {
                match v {
                    Value::$variant(v) => v,
                    _ => 0,
                }
            }
            fn combined(self, other: $ty, how: Combine) -> $ty {
                match how {
                    Combine::Sum => self + other,
                    Combine::Max => self.max(other),
                }
            }
            fn checked(self, other: $ty, how: Combine) -> Option<$ty> {
                match how {
                    Combine::Sum => self.checked_add(other),
                    Combine::Max => Some(self.max(other)),
                }
            }
        }
    };
}

figure_type!(u64, U, false);
figure_type!(i64, I, true);

/// One node figure, as the list declares it.
#[derive(Clone, Copy)]
pub(crate) struct NodeFigure {
    /// The field's name, and its JSON key.
    pub name: &'static str,
    /// When the JSON has it.
    pub in_json: InJson,
    /// Whether it is signed.
    pub signed: bool,
    /// Its value in a node.
    pub get: fn(&CallNode) -> Value,
    /// Sets it in a node.
    pub set: fn(&mut CallNode, Value),
}

/// Declares the node figures' table and the merges' sums from the list of `CallNode`'s figure fields.
macro_rules! node_figures {
    ($( $name:ident: $ty:ty, $combine:ident, $in_json:ident; )*) => {
        /// Their names (the JSON's keys), in the list's order.
        pub(crate) const NODE_FIGURE_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// Every figure of a [`CallNode`], in the list's order.
        pub(crate) const NODE_FIGURES: &[NodeFigure] = &[$(
            NodeFigure {
                name: stringify!($name),
                in_json: InJson::$in_json,
                signed: <$ty as FigureType>::SIGNED,
                get: |n| FigureType::value(n.$name),
                set: |n, v| n.$name = <$ty as FigureType>::from_value(v),
            },
        )*];

        impl CallNode {
            /// Adds `n`'s figures to this node's (a merge of two paths into one): each combined as the
            /// list says (sums, the maxima kept); then the latency histogram and the CPU figures.
            pub(crate) fn add_figures(&mut self, n: &CallNode) {
                $( self.$name = self.$name.combined(n.$name, Combine::$combine); )*
                self.latency.add(&n.latency);
                self.cpu = CpuFigures::sum(self.cpu, n.cpu);
            }

            /// [`add_figures`](Self::add_figures) for figures from files (`perfgraph merge`): a sum that
            /// would overflow is the name of its field, not a wrap (a count of `u64::MAX` plus one is not
            /// 0).
            pub(crate) fn checked_add_figures(&mut self, n: &CallNode) -> Result<(), &'static str> {
                $( self.$name = self.$name
                    .checked(n.$name, Combine::$combine)
                    .ok_or(stringify!($name))?; )*
                if !self.latency.checked_add(&n.latency) {
                    return Err("histogram");
                }
                self.cpu = CpuFigures::checked_sum(self.cpu, n.cpu)?;
                Ok(())
            }
        }
    };
}

node_figures! {
    calls: u64, Sum, Always;
    running: u64, Sum, Always;
    self_ns: u64, Sum, Always;
    total_ns: u64, Sum, Always;
    self_mem_bytes: i64, Sum, Always;
    total_mem_bytes: i64, Sum, Always;
    polls: u64, Sum, Async;
    wall_ns: u64, Sum, Async;
    max_wall_ns: u64, Max, Async;
    cancelled: u64, Sum, Async;
    allocs: u64, Sum, Heap;
    alloc_bytes: u64, Sum, Heap;
    self_allocs: u64, Sum, Heap;
    self_alloc_bytes: u64, Sum, Heap;
    heap_growth_bytes: i64, Sum, Heap;
    heap_peak_bytes: u64, Max, Heap;
}

impl CallNode {
    /// The figures the JSON has for this node, `(key, value)` in the list's order: those of every node,
    /// the async ones on an async node, the allocation ones when `heap`.
    pub(crate) fn json_figures(&self, heap: bool) -> impl Iterator<Item = (&'static str, Value)> {
        let asyncs = self.is_async();
        NODE_FIGURES
            .iter()
            .filter(move |f| match f.in_json {
                InJson::Always => true,
                InJson::Async => asyncs,
                InJson::Heap => heap,
            })
            .map(|f| (f.name, (f.get)(self)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_reads_back_what_was_set() {
        let mut n = CallNode::new(1, "x", 0, 1, Some(0));
        for (i, f) in NODE_FIGURES.iter().enumerate() {
            let v = if f.signed {
                Value::I(-(i as i64) - 1)
            } else {
                Value::U(i as u64 + 1)
            };
            (f.set)(&mut n, v);
        }
        for (i, f) in NODE_FIGURES.iter().enumerate() {
            let v = if f.signed {
                Value::I(-(i as i64) - 1)
            } else {
                Value::U(i as u64 + 1)
            };
            assert_eq!((f.get)(&n), v, "{}", f.name);
        }
        assert_eq!(NODE_FIGURE_NAMES.len(), NODE_FIGURES.len());
    }

    #[test]
    fn a_merge_sums_and_keeps_the_maxima() {
        let mut a = CallNode::new(1, "x", 0, 1, Some(0));
        a.calls = 2;
        a.max_wall_ns = 9;
        a.heap_growth_bytes = -5;
        let mut b = a.clone();
        b.max_wall_ns = 4;
        a.add_figures(&b);
        assert_eq!((a.calls, a.max_wall_ns, a.heap_growth_bytes), (4, 9, -10));
        b.calls = u64::MAX;
        assert_eq!(a.checked_add_figures(&b), Err("calls"));
    }
}
