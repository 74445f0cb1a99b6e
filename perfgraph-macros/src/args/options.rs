//! The options' table, [`OPTIONS`], and parsing a macro's options with it: each option's key looked up,
//! checked against the macro, its value parsed and stored, and every error collected.

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Error, Ident, LitStr, Path, Token};

use super::values::{
    args_value, check_placeholders, flag_value, int_value, string_value, value_tokens,
};
use super::{ArgList, Errors, Options, non_empty};

/// Every option of the two macros, in the order the "accepted options" lists give them.
const OPTIONS: &[OptionSpec] = &[
    OptionSpec {
        key: "name",
        summary: "`name = \"...\"`",
        timed: Takes::Yes,
        section: Takes::No(
            "time_section! takes its name as the first argument, not as `name = ...`: \
             `time_section!(\"residual\", level = 2)`",
        ),
        future: Takes::No(
            "time_future! takes its name as the first argument, not as `name = ...`: \
             `time_future!(\"fetch\", future, level = 2)`",
        ),
        event: Takes::No(
            "event! takes its message as the first argument: `event!(\"checkpoint written\")`",
        ),
        counter: Takes::No(
            "counter! takes its name as the first argument: `counter!(\"residual\", r)`",
        ),
        value: ValueKind::Text {
            example: "`name = \"mesh::refine\"`",
            if_empty: "the section name must not be empty; leave `name` out to use the function's name",
            slot: |options| &mut options.name,
        },
    },
    OptionSpec {
        key: "level",
        summary: "`level = 0..=3`",
        timed: Takes::Yes,
        section: Takes::Yes,
        future: Takes::Yes,
        event: Takes::Yes,
        counter: Takes::No("a counter is recorded whenever anything is; it has no level"),
        value: ValueKind::Int {
            max: 3,
            example: "`level = 0..=3`",
            expects: "`level` takes an integer from 0 to 3 (0 program phases, 1 main steps, 2 detail, \
                      3 fine detail)",
            slot: |options| &mut options.level,
        },
    },
    OptionSpec {
        key: "live",
        summary: "`live = \"...\"`",
        timed: Takes::Yes,
        section: Takes::Yes,
        future: Takes::Yes,
        event: Takes::No(
            "an event is one line; its message is the first argument: `event!(\"checkpoint written\")`",
        ),
        counter: Takes::No("a counter has no live message"),
        value: ValueKind::Text {
            example: "`live = \"Solving nonlinear system\"`",
            if_empty: "the live message must not be empty; leave `live` out to show the section's name",
            slot: |options| &mut options.live,
        },
    },
    OptionSpec {
        key: "dots",
        summary: "`dots` (or `dots = true|false`)",
        timed: Takes::Yes,
        section: Takes::Yes,
        future: Takes::Yes,
        event: Takes::No("an event has no duration, so no dots"),
        counter: Takes::No("a counter has no duration, so no dots"),
        value: ValueKind::Flag {
            slot: |options| &mut options.dots,
        },
    },
    OptionSpec {
        key: "cpu",
        summary: "`cpu` (or `cpu = true|false`)",
        timed: Takes::Yes,
        section: Takes::Yes,
        future: Takes::Yes,
        event: Takes::No("an event has no duration, so no CPU time"),
        counter: Takes::No("a counter has no duration, so no CPU time"),
        value: ValueKind::Flag {
            slot: |options| &mut options.cpu,
        },
    },
    OptionSpec {
        key: "args",
        summary: "`args(name, name = expr, ...)`",
        timed: Takes::Yes,
        section: Takes::Yes,
        future: Takes::Yes,
        event: Takes::Yes,
        counter: Takes::No("a counter is one number: `counter!(\"residual\", r)`"),
        value: ValueKind::Args {
            slot: |options| &mut options.args,
        },
    },
    OptionSpec {
        key: "crate",
        summary: "`crate = \"path\"`",
        timed: Takes::Yes,
        section: Takes::Yes,
        future: Takes::Yes,
        event: Takes::Yes,
        counter: Takes::Yes,
        value: ValueKind::QuotedPath {
            example: "`crate = \"my_crate::perfgraph\"`",
            invalid: "`crate` takes the path where perfgraph_core is reachable, e.g. \
                      `crate = \"my_crate::perfgraph\"`",
            slot: |options| &mut options.krate,
        },
    },
];

/// One row of [`OPTIONS`].
struct OptionSpec {
    /// The option's key, as written before its value; may be a keyword (`crate`).
    key: &'static str,
    /// How the "accepted options" lists of error messages show it.
    summary: &'static str,
    /// Whether `#[timed]` accepts it.
    timed: Takes,
    /// Whether `time_section!` accepts it.
    section: Takes,
    /// Whether `time_future!` accepts it (after the name and the future).
    future: Takes,
    /// Whether `event!` accepts it (after the message).
    event: Takes,
    /// Whether `counter!` accepts it (after the name and the value).
    counter: Takes,
    /// What value it takes, and the field of [`Options`] that holds it.
    value: ValueKind,
}

/// Whether a macro accepts an option.
#[derive(Clone, Copy)]
enum Takes {
    /// Accepted, and listed in that macro's "accepted options".
    Yes,
    /// Rejected with this message under the option's key (it should say what to write instead).
    No(&'static str),
}

/// The value an option takes, with its messages and the field that holds it: the field's type is the
/// value's, so a row cannot store into the wrong kind of field.
#[derive(Clone, Copy)]
enum ValueKind {
    /// `key = "..."`, not empty or blank.
    Text {
        /// The option written out, for "needs a value" and "takes a string literal".
        example: &'static str,
        /// The error under an empty or blank string.
        if_empty: &'static str,
        /// Where the literal goes.
        slot: fn(&mut Options) -> &mut Option<LitStr>,
    },
    /// `key = 0..=max`.
    Int {
        /// The largest value accepted.
        max: u8,
        /// The option written out, for "needs a value".
        example: &'static str,
        /// What the value must be: the error under anything else.
        expects: &'static str,
        /// Where the value goes, with the integer's span.
        slot: fn(&mut Options) -> &mut Option<(u8, Span)>,
    },
    /// `key` alone (true), or `key = true|false`.
    Flag {
        /// Where the value goes.
        slot: fn(&mut Options) -> &mut Option<bool>,
    },
    /// `key(name, name = expr, ...)`: values recorded with each call.
    Args {
        /// Where the list goes, with the key's span.
        slot: fn(&mut Options) -> &mut Option<ArgList>,
    },
    /// `key = "a::path"`: a string literal holding a Rust path.
    QuotedPath {
        /// The option written out, for "needs a value" and "takes a string literal".
        example: &'static str,
        /// The error under a string that is no path.
        invalid: &'static str,
        /// Where the parsed path goes.
        slot: fn(&mut Options) -> &mut Option<Path>,
    },
}

/// Which macro is parsing: decides which options it accepts and what its errors list.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Macro {
    /// `#[timed(...)]`.
    Timed,
    /// `time_section!(...)`.
    Section,
    /// `time_future!(...)`.
    Future,
    /// `event!(...)`.
    Event,
    /// `counter!(...)`.
    Counter,
}

/// The options `mac` accepts, as its error messages list them.
pub(super) fn accepted_options(mac: Macro) -> String {
    OPTIONS
        .iter()
        .filter(|spec| matches!(spec.taken_by(mac), Takes::Yes))
        .map(|spec| spec.summary)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses `option (, option)* ,?`, collecting every error before returning.
pub(super) fn parse_options(input: ParseStream, mac: Macro) -> syn::Result<Options> {
    let mut options = Options::default();
    let mut errors = Errors::default();
    while !input.is_empty() {
        if let Err(e) = parse_option(input, mac, &mut options) {
            errors.push(e);
            // Skip to the next comma so later options are still checked.
            while !input.is_empty() && !input.peek(Token![,]) {
                let _: proc_macro2::TokenTree = input.parse()?;
            }
        }
        if input.is_empty() {
            break;
        }
        input.parse::<Token![,]>()?;
    }
    if let Some(live) = &options.live {
        let args = options.args.as_ref().map_or(&[][..], |(a, _)| a);
        match check_placeholders(live, args) {
            Ok(fill) => options.fill = fill,
            Err(e) => errors.push(e),
        }
    }
    errors.finish(options)
}

/// Parses one option into `options`, as its row of [`OPTIONS`] says.
fn parse_option(input: ParseStream, mac: Macro, options: &mut Options) -> syn::Result<()> {
    let Some(spec) = peek_option(input) else {
        return Err(unknown_option(input, mac)?);
    };
    let key = input.call(Ident::parse_any)?;
    if let Takes::No(message) = spec.taken_by(mac) {
        return Err(Error::new_spanned(key, message));
    }
    spec.parse_value(input, key.span(), options)
}

/// The row of the option whose key comes next, if any. Keywords count (`crate`), as with `Token![crate]`;
/// raw identifiers (`r#name`) do not.
fn peek_option(input: ParseStream) -> Option<&'static OptionSpec> {
    let (key, _) = input.cursor().ident()?;
    OPTIONS.iter().find(|spec| key == spec.key)
}

/// The error for what stands where an option should but names none: a hint for a bare string
/// (`#[timed("solve")]`), else the accepted options. Fails only if the tokens cannot be read.
fn unknown_option(input: ParseStream, mac: Macro) -> syn::Result<Error> {
    // Not `lookahead1().error()`: its message would not say what the values look like; ours does.
    let accepted = accepted_options(mac);
    if mac == Macro::Timed && input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        let message = format!(
            "to name the section write `name = {}`; accepted options: {accepted}",
            lit.to_token_stream()
        );
        return Ok(Error::new_spanned(lit, message));
    }
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        let message = format!("unknown option `{ident}`; accepted options: {accepted}");
        return Ok(Error::new_spanned(ident, message));
    }
    let tokens = value_tokens(input)?;
    let message = format!("expected an option; accepted options: {accepted}");
    Ok(Error::new_spanned(tokens, message))
}

impl OptionSpec {
    /// Whether `mac` accepts this option.
    fn taken_by(&self, mac: Macro) -> Takes {
        match mac {
            Macro::Timed => self.timed,
            Macro::Section => self.section,
            Macro::Future => self.future,
            Macro::Event => self.event,
            Macro::Counter => self.counter,
        }
    }

    /// Parses what follows the key (`key` is its span) and stores it in its field of `options`. Checks the
    /// value before the duplicate, so a bad value is reported as such even when given twice.
    fn parse_value(&self, input: ParseStream, key: Span, options: &mut Options) -> syn::Result<()> {
        match self.value {
            ValueKind::Text {
                example,
                if_empty,
                slot,
            } => {
                let value = self.string_after_equals(input, key, example)?;
                non_empty(&value, if_empty)?;
                self.store(slot(options), value, key)
            }
            ValueKind::Int {
                max,
                example,
                expects,
                slot,
            } => {
                equals(input, key, example)?;
                let value = int_value(input, self.key, max, expects)?;
                self.store(slot(options), value, key)
            }
            ValueKind::Flag { slot } => {
                let value = flag_value(input, self.key)?;
                self.store(slot(options), value, key)
            }
            ValueKind::Args { slot } => {
                let value = args_value(input, key)?;
                self.store(slot(options), (value, key), key)
            }
            ValueKind::QuotedPath {
                example,
                invalid,
                slot,
            } => {
                let value = self.string_after_equals(input, key, example)?;
                let path = value
                    .parse::<Path>()
                    .map_err(|_| Error::new_spanned(&value, invalid))?;
                self.store(slot(options), path, key)
            }
        }
    }

    /// `= "..."`: the string literal after the `=`.
    fn string_after_equals(
        &self,
        input: ParseStream,
        key: Span,
        example: &str,
    ) -> syn::Result<LitStr> {
        equals(input, key, example)?;
        string_value(input, self.key, example)
    }

    /// Puts `value` in the option's field, or reports the option as given twice, under the second key.
    fn store<T>(&self, field: &mut Option<T>, value: T, key: Span) -> syn::Result<()> {
        if field.is_some() {
            return Err(duplicate(key, self.key));
        }
        *field = Some(value);
        Ok(())
    }
}

/// The `=` after an option that needs a value; without one, an error under the option naming its form.
fn equals(input: ParseStream, key: Span, form: &str) -> syn::Result<()> {
    if input.peek(Token![=]) {
        input.parse::<Token![=]>()?;
        Ok(())
    } else {
        Err(Error::new(
            key,
            format!("this option needs a value: {form}"),
        ))
    }
}

/// The error for an option given twice, under its second key.
fn duplicate(span: Span, option: &str) -> Error {
    Error::new(span, format!("duplicate option `{option}`: give it once"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second row with the same key would never be reached: lookup stops at the first.
    #[test]
    fn option_keys_are_distinct() {
        for (i, spec) in OPTIONS.iter().enumerate() {
            assert!(
                OPTIONS[..i].iter().all(|earlier| earlier.key != spec.key),
                "option `{}` has two rows",
                spec.key
            );
        }
    }

    /// The accepted-options lists must show each option under the key the parser matches.
    #[test]
    fn summaries_start_with_their_key() {
        for spec in OPTIONS {
            assert!(
                spec.summary.starts_with(&format!("`{}", spec.key)),
                "summary {:?} does not show key `{}`",
                spec.summary,
                spec.key
            );
        }
    }
}
