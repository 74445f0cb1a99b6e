//! One JSON value that is not a container ([`Scalar`]), and an object of them read into [`Fields`]: what
//! the fixed-shape records (a process, a counter, a lock, a node's scalars) are read as. An object's keys
//! are matched against the caller's lists without holding their text; other keys' values are skipped.

use std::fmt;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::data::report::Report;
use crate::export::json_input::{own_seed, refuse_others};
use crate::export::json_rows::{Cell, Field, Read};

/// One JSON value that is not an array or an object.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Scalar {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(String),
}

/// Reads a [`Scalar`]; an array or an object there is an error (and is not read into memory).
pub(super) struct ScalarSeed;

own_seed!(ScalarSeed);

impl<'de> Visitor<'de> for ScalarSeed {
    type Value = Scalar;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, a string, true, false or null")
    }
    fn visit_unit<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
        Ok(Scalar::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
        Ok(match u64::try_from(v) {
            Ok(u) => Scalar::U64(u),
            Err(_) => Scalar::I64(v),
        })
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::F64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        if v.len() > Report::MAX_JSON_NAME_BYTES {
            return Err(E::custom(format!(
                "limit: a string longer than {} bytes (Report::MAX_JSON_NAME_BYTES)",
                Report::MAX_JSON_NAME_BYTES
            )));
        }
        Ok(Scalar::Str(v.to_owned()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Scalar, A::Error> {
        Err(de::Error::custom("an array where a single value belongs"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Scalar, A::Error> {
        Err(de::Error::custom("an object where a single value belongs"))
    }
}

/// An object's members read so far, by key (each key once; a repeated key keeps its last value).
#[derive(Default)]
pub(super) struct Fields {
    values: Vec<(&'static str, Scalar)>,
}

impl Fields {
    pub(super) fn set(&mut self, key: &'static str, v: Scalar) {
        match self.values.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = v,
            None => self.values.push((key, v)),
        }
    }
    pub(super) fn get(&self, key: &str) -> Option<&Scalar> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
    pub(super) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
    pub(super) fn u64(&self, key: &str, at: &str) -> Result<u64, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::U64(v)) => Ok(*v),
            Some(_) => Err(format!("{at}\"{key}\" is not a whole number")),
        }
    }
    /// A whole number that only some objects carry (async nodes' figures, a thread's `cpu_ns`): 0 when
    /// absent.
    pub(super) fn u64_or_0(&self, key: &str, at: &str) -> Result<u64, String> {
        if self.has(key) {
            self.u64(key, at)
        } else {
            Ok(0)
        }
    }
    /// A whole number that must fit `T` (a level, a rank, a pid): the error names the field, never a
    /// silent cut (`level: 300` is not level 44).
    pub(super) fn narrow<T: TryFrom<u64>>(&self, key: &str, at: &str) -> Result<T, String> {
        let v = self.u64(key, at)?;
        T::try_from(v).map_err(|_| format!("{at}\"{key}\" is out of range ({v})"))
    }
    pub(super) fn i64(&self, key: &str, at: &str) -> Result<i64, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::I64(v)) => Ok(*v),
            Some(Scalar::U64(v)) => {
                i64::try_from(*v).map_err(|_| format!("{at}\"{key}\" is out of range ({v})"))
            }
            Some(_) => Err(format!("{at}\"{key}\" is not a whole number")),
        }
    }
    /// A number: a float or a whole number, or the string of one that is not finite (`"NaN"`, `"inf"`:
    /// how the writer gives those).
    pub(super) fn f64(&self, key: &str, at: &str) -> Result<f64, String> {
        match self.get(key) {
            Some(Scalar::F64(v)) => Ok(*v),
            Some(Scalar::U64(v)) => Ok(*v as f64),
            Some(Scalar::I64(v)) => Ok(*v as f64),
            Some(Scalar::Str(v)) => v
                .parse::<f64>()
                .map_err(|_| format!("{at}\"{key}\" is not a number")),
            None => Err(format!("{at}no \"{key}\"")),
            Some(_) => Err(format!("{at}\"{key}\" is not a number")),
        }
    }
    pub(super) fn bool(&self, key: &str, at: &str) -> Result<bool, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::Bool(v)) => Ok(*v),
            Some(_) => Err(format!("{at}\"{key}\" is not true or false")),
        }
    }
    pub(super) fn str(&self, key: &str, at: &str) -> Result<&str, String> {
        match self.get(key) {
            None => Err(format!("{at}no \"{key}\"")),
            Some(Scalar::Str(v)) => Ok(v),
            Some(_) => Err(format!("{at}\"{key}\" is not a string")),
        }
    }
}

/// Sets `row`'s fields (a table of `export/json_rows.rs`) from the object `o` at `at`, in the table's order:
/// the first one missing or of the wrong kind is the error.
pub(super) fn read_row<T>(
    o: &Fields,
    at: &str,
    fields: &[Field<T>],
    row: &mut T,
) -> Result<(), String> {
    for f in fields {
        let v = match f.read {
            Read::Whole => Cell::Whole(o.u64(f.key, at)?),
            Read::Whole32 => Cell::Whole(o.narrow::<u32>(f.key, at)?.into()),
            Read::WholeOr0 => Cell::Whole(o.u64_or_0(f.key, at)?),
            Read::Float => Cell::Float(o.f64(f.key, at)?),
            Read::Flag => Cell::Flag(o.bool(f.key, at)?),
            Read::Text => Cell::Text(o.str(f.key, at)?),
            Read::Derived => continue,
        };
        (f.set)(row, v);
    }
    Ok(())
}

/// Reads an object's key as one of the known keys, in either list (`None`: a key this reader does not use,
/// whose value is skipped), without holding the key's text.
pub(super) struct KeySeed(
    pub(super) &'static [&'static str],
    pub(super) &'static [&'static str],
    pub(super) &'static [&'static str],
);

own_seed!(KeySeed, deserialize_str);

impl<'de> Visitor<'de> for KeySeed {
    type Value = Option<&'static str>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(self
            .0
            .iter()
            .chain(self.1)
            .chain(self.2)
            .find(|k| **k == v)
            .copied())
    }
}

/// An object of scalars (`known` keys kept, others skipped) at `at`.
pub(super) struct ObjectSeed {
    pub(super) known: &'static [&'static str],
    pub(super) at: String,
}

own_seed!(ObjectSeed);

impl<'de> Visitor<'de> for ObjectSeed {
    type Value = Fields;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields, A::Error> {
        let mut fields = Fields::default();
        while let Some(key) = map.next_key_seed(KeySeed(self.known, &[], &[]))? {
            match key {
                Some(k) => fields.set(k, map.next_value_seed(ScalarSeed)?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(fields)
    }
    refuse_others!(|s: &Self| format!("{}not an object", s.at), and arrays);
}

/// Takes one from the file's budget of nodes (and `processes` entries); past [`Report::MAX_JSON_NODES`],
/// the error.
pub(super) fn take_node<E: de::Error>(left: &mut usize) -> Result<(), E> {
    match left.checked_sub(1) {
        Some(l) => {
            *left = l;
            Ok(())
        }
        None => Err(E::custom(format!(
            "limit: more than {} nodes (Report::MAX_JSON_NODES)",
            Report::MAX_JSON_NODES
        ))),
    }
}
