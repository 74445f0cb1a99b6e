//! Args on the recording side: how the macros turn an expression into an [`ArgValue`] (integers, floats and
//! bools by value, anything else through `Display`), and the ring records that carry them to the
//! background thread, two args a record, just before the record of the call or event they belong to
//! (as a call's CPU figures do: `local::record`).
//!
//! A text arg does not fit in a word: it waits in `marks` under a number until the background thread takes
//! it, and the record carries the number.

use std::fmt::Display;

use super::marks;
use super::ring::WORDS;
use crate::data::args::{ArgValue, MAX_ARGS};

/// What an arg expression is wrapped in so that method resolution picks [`ViaPrimitive`] for the
/// primitive types and [`ViaDisplay`] for the rest (autoref specialisation: the macros call
/// `(&&Wrap(&value)).__perfgraph_arg()`).
#[doc(hidden)]
pub struct Wrap<'a, T: ?Sized>(pub &'a T);

/// An arg of a primitive type: recorded as such.
#[doc(hidden)]
pub trait ViaPrimitive {
    /// The value.
    fn __perfgraph_arg(&self) -> ArgValue;
}

/// Any other arg: its `Display` text.
#[doc(hidden)]
pub trait ViaDisplay {
    /// The value.
    fn __perfgraph_arg(&self) -> ArgValue;
}

impl<T: Display + ?Sized> ViaDisplay for Wrap<'_, T> {
    fn __perfgraph_arg(&self) -> ArgValue {
        ArgValue::text(self.0.to_string())
    }
}

macro_rules! via_primitive {
    ($($t:ty => $variant:ident as $as:ty),* $(,)?) => {
        $(
            impl ViaPrimitive for &Wrap<'_, $t> {
                #[inline(always)]
                fn __perfgraph_arg(&self) -> ArgValue {
                    ArgValue::$variant(*self.0 as $as)
                }
            }
        )*
    };
}

via_primitive!(
    i8 => Int as i64, i16 => Int as i64, i32 => Int as i64, i64 => Int as i64, isize => Int as i64,
    u8 => Uint as u64, u16 => Uint as u64, u32 => Uint as u64, u64 => Uint as u64, usize => Uint as u64,
    f32 => Float as f64, f64 => Float as f64, bool => Bool as bool,
);

/// The `depth` of a record that carries the first two args of the call or event record that follows it
/// ([`push_args`]); `ARGS - k` carries pair `k` (below `local::record`'s CPU figures, which check it).
pub const ARGS: u32 = u32::MAX - 12;
/// Records of args a call or event pushes at most: two args each.
pub const ARG_PAIRS: usize = MAX_ARGS.div_ceil(2);

/// The kind of an arg in its record, 4 bits.
const INT: u64 = 1;
const UINT: u64 = 2;
const FLOAT: u64 = 3;
const BOOL: u64 = 4;
const TEXT: u64 = 5;

/// An arg's kind and word in its record; a text arg is kept in `marks` (taken from `a`) and its number is
/// the word.
#[inline(always)]
fn word(a: &mut ArgValue) -> (u64, u64) {
    match a {
        ArgValue::Int(v) => (INT, *v as u64),
        ArgValue::Uint(v) => (UINT, *v),
        ArgValue::Float(v) => (FLOAT, v.to_bits()),
        ArgValue::Bool(v) => (BOOL, *v as u64),
        ArgValue::Text(t) => text_word(std::mem::take(t)),
    }
}

#[cold]
#[inline(never)]
fn text_word(text: String) -> (u64, u64) {
    (TEXT, marks::keep(text))
}

/// Hands `push` the words of the records that carry `args` (at most [`MAX_ARGS`]) of `site` (a section's
/// or an event's id): pair `k` as `[arg 2k, arg 2k + 1, site | (ARGS - k) << 32, kind 2k | kind 2k + 1 << 8
/// | count << 16]`. A text arg is moved into `marks` and its number recorded.
#[inline(always)]
pub fn push_args(site: u32, args: &mut [ArgValue], mut push: impl FnMut([u64; WORDS])) {
    let n = args.len().min(MAX_ARGS);
    let mut k = 0;
    while 2 * k < n {
        let (ka, a) = word(&mut args[2 * k]);
        let (kb, b) = match args.get_mut(2 * k + 1).filter(|_| 2 * k + 1 < n) {
            Some(arg) => word(arg),
            None => (0, 0),
        };
        let depth = (ARGS - k as u32) as u64;
        push([
            a,
            b,
            site as u64 | depth << 32,
            ka | kb << 8 | (n as u64) << 16,
        ]);
        k += 1;
    }
}

/// The args of one call or event as the ring carried them: plain words, a text arg as its number in
/// `marks` (see [`RawArgs::take`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RawArgs {
    /// How many.
    pub count: u8,
    /// Each one's kind.
    kinds: [u8; MAX_ARGS],
    /// Each one's word.
    words: [u64; MAX_ARGS],
}

impl RawArgs {
    /// Adds the args record `w` (pair `k`, see [`push_args`]). Returns whether it is pair 0 (the first of
    /// a call's args).
    pub fn add(&mut self, k: usize, w: [u64; WORDS]) -> bool {
        if k == 0 {
            *self = RawArgs::default();
        }
        self.count = (w[3] >> 16) as u8;
        for (j, word) in [w[0], w[1]].into_iter().enumerate() {
            let i = 2 * k + j;
            if i < MAX_ARGS {
                self.kinds[i] = (w[3] >> (8 * j)) as u8;
                self.words[i] = word;
            }
        }
        k == 0
    }

    /// The values, in order, text args taken from `marks` (each once: call this once per record, written
    /// or not, so no text is left behind).
    pub fn take(&self) -> Vec<ArgValue> {
        self.values(marks::take)
    }

    /// The values, text args copied (left in `marks` for [`take`](Self::take)).
    pub fn peek(&self) -> Vec<ArgValue> {
        self.values(marks::peek)
    }

    /// Lets go of the text args not taken yet.
    pub fn discard(&self) {
        for i in 0..(self.count as usize).min(MAX_ARGS) {
            if self.kinds[i] as u64 == TEXT {
                let _ = marks::take(self.words[i]);
            }
        }
    }

    fn values(&self, text: fn(u64) -> Option<String>) -> Vec<ArgValue> {
        (0..(self.count as usize).min(MAX_ARGS))
            .map(|i| {
                let w = self.words[i];
                match self.kinds[i] as u64 {
                    INT => ArgValue::Int(w as i64),
                    UINT => ArgValue::Uint(w),
                    FLOAT => ArgValue::Float(f64::from_bits(w)),
                    BOOL => ArgValue::Bool(w != 0),
                    TEXT => ArgValue::Text(text(w).unwrap_or_default()),
                    _ => ArgValue::Text(String::new()),
                }
            })
            .collect()
    }
}

/// Whether `depth` is an args record's, and which pair.
pub fn pair_of(depth: u32) -> Option<usize> {
    let k = ARGS.wrapping_sub(depth) as usize;
    (depth <= ARGS && k < ARG_PAIRS).then_some(k)
}

#[cfg(test)]
mod tests {
    use super::{RawArgs, ViaDisplay, ViaPrimitive, Wrap, pair_of, push_args};
    use crate::data::args::ArgValue;

    #[test]
    #[allow(clippy::needless_borrow)] // reason: the macros' autoref form, which picks the trait.
    fn primitives_by_value_the_rest_as_text() {
        let (i, u, f, b) = (-3i32, 7usize, 2.5f32, true);
        assert_eq!((&&Wrap(&i)).__perfgraph_arg(), ArgValue::Int(-3));
        assert_eq!((&&Wrap(&u)).__perfgraph_arg(), ArgValue::Uint(7));
        assert_eq!((&&Wrap(&f)).__perfgraph_arg(), ArgValue::Float(2.5));
        assert_eq!((&&Wrap(&b)).__perfgraph_arg(), ArgValue::Bool(true));
        let p = std::path::Path::new("/tmp/a");
        assert_eq!(
            (&&Wrap(&p.display())).__perfgraph_arg(),
            ArgValue::Text("/tmp/a".into())
        );
        assert_eq!(
            (&&Wrap("lit")).__perfgraph_arg(),
            ArgValue::Text("lit".into())
        );
    }

    #[test]
    fn args_round_trip_through_their_records() {
        let args = [
            ArgValue::Int(-1),
            ArgValue::Uint(u64::MAX),
            ArgValue::Float(0.5),
            ArgValue::Bool(false),
            ArgValue::Text("tile 7".into()),
        ];
        let mut raw = RawArgs::default();
        let mut records = 0;
        push_args(9, &mut args.clone(), |w| {
            records += 1;
            assert_eq!(w[2] as u32, 9);
            let k = pair_of((w[2] >> 32) as u32).unwrap();
            raw.add(k, w);
        });
        assert_eq!(records, 3);
        assert_eq!(raw.take(), args);
    }
}
