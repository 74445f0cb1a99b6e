//! What the two JSON readers ([`json_read`](super::json_read): the call-tree JSON;
//! [`chrome_read`](super::chrome_read): Chrome traces) share: the bounded input they read through
//! ([`Guard`]), the [`own_seed!`] impl that makes a visitor its own seed, and the [`refuse_others!`]
//! visitor methods that turn a scalar where a container belongs into one error line.

use std::io::{self, Read};

/// How much of an untrusted input a reader takes, and what it says past that.
pub(crate) struct Limits {
    /// Most bytes in all.
    pub bytes: u64,
    /// Longest string token, bytes as written (escapes included).
    pub token: usize,
    /// The error past `bytes`.
    pub too_large: fn() -> String,
    /// The error past `token`.
    pub too_long: fn() -> String,
}

/// The input, held to its [`Limits`]: serde_json buffers a string whole before it hands it over, so an
/// endless one (or `/dev/zero` past a quote) would otherwise grow to the memory limit.
pub(crate) struct Guard<R> {
    inner: R,
    limits: &'static Limits,
    read: u64,
    in_string: bool,
    escaped: bool,
    token: usize,
}

impl<R: Read> Guard<R> {
    /// `inner`, held to `limits`, behind a buffer: serde_json reads its input a byte at a time, so
    /// without one each byte was a call through the guard (64 MiB of an endless answer took 10 s to
    /// refuse in a debug build).
    pub(crate) fn buffered(inner: R, limits: &'static Limits) -> io::BufReader<Self> {
        let guard = Guard {
            inner,
            limits,
            read: 0,
            in_string: false,
            escaped: false,
            token: 0,
        };
        io::BufReader::with_capacity(64 * 1024, guard)
    }
}

impl<R: Read> Read for Guard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.limits.bytes {
            return Err(io::Error::other((self.limits.too_large)()));
        }
        for &b in &buf[..n] {
            if self.in_string {
                self.token += 1;
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                if self.token > self.limits.token {
                    return Err(io::Error::other((self.limits.too_long)()));
                }
            } else if b == b'"' {
                self.in_string = true;
                self.token = 1;
            }
        }
        Ok(n)
    }
}

/// A `Visitor`'s methods for the scalars it refuses: each is an error with the message `$msg(&self)`.
/// With `null_is_none` first, for a member that may be `null` (its `Self::Value` an `Option`), a `null` is
/// read as `None` and only the other scalars are refused. With `and arrays` (`and objects`) last, an array
/// (an object) is refused with the same message: what a visitor of the other container writes.
macro_rules! refuse_others {
    (null_is_none, $msg:expr, and $containers:ident) => {
        $crate::export::json_input::refuse_others!(null_is_none, $msg);
        $crate::export::json_input::refuse_others!(@$containers $msg);
    };
    (null_is_none, $msg:expr) => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        $crate::export::json_input::refuse_others!(@scalars $msg);
    };
    ($msg:expr, and $containers:ident) => {
        $crate::export::json_input::refuse_others!($msg);
        $crate::export::json_input::refuse_others!(@$containers $msg);
    };
    ($msg:expr) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Err(E::custom($msg(&self)))
        }
        $crate::export::json_input::refuse_others!(@scalars $msg);
    };
    (@arrays $msg:expr) => {
        fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(de::Error::custom($msg(&self)))
        }
    };
    (@objects $msg:expr) => {
        fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            Err(de::Error::custom($msg(&self)))
        }
    };
    (@scalars $msg:expr) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(E::custom($msg(&self)))
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(E::custom($msg(&self)))
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(E::custom($msg(&self)))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(E::custom($msg(&self)))
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(E::custom($msg(&self)))
        }
    };
}
pub(crate) use refuse_others;

/// `DeserializeSeed` for `$seed`, a `Visitor` that carries the state its value is read with: it reads
/// whatever value comes (`deserialize_any`, or the `Deserializer` method named after the type) with
/// itself as the visitor, into its `Visitor::Value`.
macro_rules! own_seed {
    ($seed:ty) => {
        $crate::export::json_input::own_seed!($seed, deserialize_any);
    };
    ($seed:ty, $method:ident) => {
        impl<'de> serde::de::DeserializeSeed<'de> for $seed {
            type Value = <Self as serde::de::Visitor<'de>>::Value;
            fn deserialize<D: serde::de::Deserializer<'de>>(
                self,
                d: D,
            ) -> Result<Self::Value, D::Error> {
                d.$method(self)
            }
        }
    };
}
pub(crate) use own_seed;
