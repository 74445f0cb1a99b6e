//! Parsing the options of `#[timed(...)]`, `time_section!(...)` and `time_future!(...)` into a typed struct, with a spanned error
//! for every mistake.
//!
//! One table, [`OPTIONS`], says everything about each option: its key, how the error messages list it,
//! which macro accepts it, what value it takes and which field of [`Options`] holds it. Parsing and the
//! "accepted options" lists both read it, so a new option is one row there plus its field.

use proc_macro2::Span;
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, LitBool, LitInt, LitStr, Path, Token};

/// Every error found so far, combined into one (each keeps its own span), so a macro reports all its
/// problems at once rather than the first.
#[derive(Default)]
pub struct Errors(Option<Error>);

impl Errors {
    /// Adds `e`.
    pub fn push(&mut self, e: Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// `value` if nothing was pushed, else every error pushed.
    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(value),
        }
    }
}

/// Options common to the macros, each `None` until the user gives it.
#[derive(Default)]
pub struct Options {
    /// `name = "..."` (`#[timed]` only).
    pub name: Option<LitStr>,
    /// `level = 0..=3`, with the span of the integer.
    pub level: Option<(u8, Span)>,
    /// `live = "..."`.
    pub live: Option<LitStr>,
    /// `dots` or `dots = true|false`.
    pub dots: Option<bool>,
    /// `cpu` or `cpu = true|false`.
    pub cpu: Option<bool>,
    /// `crate = "path"`, parsed into the path.
    pub krate: Option<Path>,
    /// `args(name, name = expr, ...)`, with the span of `args`.
    pub args: Option<ArgList>,
    /// The live message names args (`{name}`): filled in at each call while live print is on.
    pub fill: bool,
}

/// The args of `args(...)`, with the span of `args`.
pub type ArgList = (Vec<Arg>, Span);

/// One arg of `args(...)`: `name` (a variable, or for `#[timed]` a parameter, of that name) or
/// `name = expr`.
pub struct Arg {
    /// Its name, as the trace and the live message know it.
    pub name: Ident,
    /// The expression recorded; `None` for the shorthand `name`.
    pub value: Option<syn::Expr>,
}

/// Most args one call site takes (perfgraph-core's `data::MAX_ARGS`).
pub const MAX_ARGS: usize = 8;

/// Longest name of an arg, bytes: with [`MAX_ARGS`] of them and their values, an event stays within a page.
pub const MAX_ARG_NAME: usize = 64;

/// `#[timed(options)]`.
pub struct TimedArgs {
    /// Everything between the parentheses.
    pub options: Options,
}

/// `time_section!("name", options)`.
pub struct SectionArgs {
    /// The section name, the first argument.
    pub name: LitStr,
    /// The options after the name.
    pub options: Options,
}

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
enum Macro {
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
fn accepted_options(mac: Macro) -> String {
    OPTIONS
        .iter()
        .filter(|spec| matches!(spec.taken_by(mac), Takes::Yes))
        .map(|spec| spec.summary)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Parse for TimedArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(TimedArgs {
            options: parse_options(input, Macro::Timed)?,
        })
    }
}

/// `time_future!`'s arguments: the name, the future, then `time_section!`'s options.
pub struct FutureArgs {
    /// The section name, the first argument.
    pub name: LitStr,
    /// The future expression, the second argument.
    pub future: syn::Expr,
    /// The options after the future.
    pub options: Options,
}

impl Parse for FutureArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (name, future, options) = literal_and_expr(
            input,
            "time_future! takes the section name as a string literal, then the future, e.g. \
             `time_future!(\"fetch\", async { ... }, level = 2)`",
            "the section name must not be empty: say what the future does, e.g. `time_future!(\"fetch\", f)`",
            Macro::Future,
        )?;
        Ok(FutureArgs {
            name,
            future,
            options,
        })
    }
}

impl Parse for SectionArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = leading_literal(
            input,
            &("time_section! needs a section name first: `time_section!(\"name\")`, optionally followed by \
               options: "
                .to_owned()
                + &accepted_options(Macro::Section)),
            "time_section! takes the section name as a string literal first, e.g. \
             `time_section!(\"residual\", level = 2)`",
        )?;
        non_empty(
            &name,
            "the section name must not be empty: say what the section does, e.g. `time_section!(\"residual\")`",
        )?;
        let options = trailing_options(input, Macro::Section)?;
        Ok(SectionArgs { name, options })
    }
}

/// `event!("message", options)`.
pub struct EventArgs {
    /// The message, the first argument.
    pub message: LitStr,
    /// The options after it (`args`, `level`, `crate`).
    pub options: Options,
}

impl Parse for EventArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let usage = "event! takes its message as a string literal first, e.g. \
                     `event!(\"checkpoint written\", args(step))`";
        let message = leading_literal(input, usage, usage)?;
        non_empty(
            &message,
            "the event's message must not be empty: say what happened",
        )?;
        let options = trailing_options(input, Macro::Event)?;
        Ok(EventArgs { message, options })
    }
}

/// `counter!("name", value, options)`.
pub struct CounterArgs {
    /// The counter's name, the first argument.
    pub name: LitStr,
    /// The value, the second.
    pub value: syn::Expr,
    /// The options after it (`crate`).
    pub options: Options,
}

impl Parse for CounterArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let (name, value, options) = literal_and_expr(
            input,
            "counter! takes the counter's name as a string literal, then its value, e.g. \
             `counter!(\"residual\", r)`",
            "the counter's name must not be empty: say what it counts",
            Macro::Counter,
        )?;
        Ok(CounterArgs {
            name,
            value,
            options,
        })
    }
}

/// The string literal a macro's arguments start with. Without arguments, the error `if_missing` at the
/// call; with something else first, `usage` under it.
fn leading_literal(input: ParseStream, if_missing: &str, usage: &str) -> syn::Result<LitStr> {
    if input.peek(LitStr) {
        input.parse()
    } else if input.is_empty() {
        Err(Error::new(Span::call_site(), if_missing))
    } else {
        let tokens: proc_macro2::TokenStream = input.parse()?;
        Err(Error::new_spanned(tokens, usage))
    }
}

/// The options after a macro's positional arguments (`, option, ...`), none if nothing follows.
fn trailing_options(input: ParseStream, mac: Macro) -> syn::Result<Options> {
    if input.is_empty() {
        return Ok(Options::default());
    }
    input.parse::<Token![,]>()?;
    parse_options(input, mac)
}

/// `"name", expr, options`, as `time_future!` and `counter!` take them: a non-empty literal (`if_empty`
/// under an empty one), an expression (`usage` under a literal alone), then `mac`'s options.
fn literal_and_expr(
    input: ParseStream,
    usage: &str,
    if_empty: &str,
    mac: Macro,
) -> syn::Result<(LitStr, syn::Expr, Options)> {
    let name = leading_literal(input, usage, usage)?;
    non_empty(&name, if_empty)?;
    if input.is_empty() {
        return Err(Error::new_spanned(&name, usage));
    }
    input.parse::<Token![,]>()?;
    let expr: syn::Expr = input.parse()?;
    Ok((name, expr, trailing_options(input, mac)?))
}

/// Rejects an empty or all-blank literal with `message`.
fn non_empty(lit: &LitStr, message: &str) -> syn::Result<()> {
    if lit.value().trim().is_empty() {
        Err(Error::new_spanned(lit, message))
    } else {
        Ok(())
    }
}

/// Parses `option (, option)* ,?`, collecting every error before returning.
fn parse_options(input: ParseStream, mac: Macro) -> syn::Result<Options> {
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

/// The tokens up to the next comma, for an error span.
fn value_tokens(input: ParseStream) -> syn::Result<proc_macro2::TokenStream> {
    let mut tokens = proc_macro2::TokenStream::new();
    while !input.is_empty() && !input.peek(Token![,]) {
        let tt: proc_macro2::TokenTree = input.parse()?;
        tokens.extend([tt]);
    }
    Ok(tokens)
}

/// A string literal as `option`'s value; anything else is an error naming the `example`.
fn string_value(input: ParseStream, option: &str, example: &str) -> syn::Result<LitStr> {
    if input.peek(LitStr) {
        return input.parse();
    }
    let tokens = value_tokens(input)?;
    if tokens.is_empty() {
        return Err(input.error(format!("`{option}` needs a string literal, e.g. {example}")));
    }
    Err(Error::new_spanned(
        tokens,
        format!("`{option}` takes a string literal, e.g. {example}"),
    ))
}

/// An integer from 0 to `max` as `option`'s value, with its span; anything else is an error saying what the
/// option `expects`.
fn int_value(input: ParseStream, option: &str, max: u8, expects: &str) -> syn::Result<(u8, Span)> {
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        return match lit.base10_parse::<u8>() {
            Ok(value) if value <= max => Ok((value, lit.span())),
            _ => Err(Error::new_spanned(
                lit,
                format!("{option} out of range; {expects}"),
            )),
        };
    }
    let tokens = value_tokens(input)?;
    if tokens.is_empty() {
        return Err(input.error(expects));
    }
    Err(Error::new_spanned(tokens, expects))
}

/// The list of `args(...)`: `name` or `name = expr`, comma-separated, names distinct, at most
/// [`MAX_ARGS`].
fn args_value(input: ParseStream, key: Span) -> syn::Result<Vec<Arg>> {
    let form =
        "`args` takes a list of names or `name = value`, e.g. `args(tile, bytes = data.len())`";
    if !input.peek(syn::token::Paren) {
        return Err(Error::new(key, form));
    }
    let content;
    syn::parenthesized!(content in input);
    let mut list: Vec<Arg> = Vec::new();
    let mut errors = Errors::default();
    while !content.is_empty() {
        if !content.peek(Ident::peek_any) {
            let tokens = value_tokens(&content)?;
            errors.push(Error::new_spanned(tokens, form));
        } else {
            let name = content.call(Ident::parse_any)?;
            let value = if content.peek(Token![=]) {
                content.parse::<Token![=]>()?;
                Some(content.parse::<syn::Expr>()?)
            } else {
                None
            };
            if name.to_string().len() > MAX_ARG_NAME {
                errors.push(Error::new_spanned(
                    &name,
                    format!(
                        "an arg's name is at most {MAX_ARG_NAME} bytes: it is a key in every event"
                    ),
                ));
            } else if list.iter().any(|a| a.name == name) {
                errors.push(Error::new_spanned(
                    &name,
                    format!("duplicate arg `{name}`: give each arg once"),
                ));
            } else if list.len() == MAX_ARGS {
                errors.push(Error::new_spanned(
                    &name,
                    format!("too many args: a call records at most {MAX_ARGS}"),
                ));
            }
            list.push(Arg { name, value });
        }
        if content.is_empty() {
            break;
        }
        content.parse::<Token![,]>()?;
    }
    if list.is_empty() {
        errors.push(Error::new(key, form));
    }
    errors.finish(list)
}

/// The `{name}` placeholders of a live message, in order (`{{` and `}}` are literal braces); an error under
/// the message for a placeholder that names no arg, or is not a plain name.
pub fn check_placeholders(live: &LitStr, args: &[Arg]) -> syn::Result<bool> {
    let text = live.value();
    let mut rest = text.as_str();
    let mut any = false;
    while let Some(i) = rest.find(['{', '}']) {
        let (brace, after) = (rest.as_bytes()[i], &rest[i + 1..]);
        if after.as_bytes().first() == Some(&brace) {
            rest = &after[1..];
            continue;
        }
        if brace == b'}' {
            return Err(Error::new_spanned(
                live,
                "unmatched `}` in the live message: write `}}` for a brace",
            ));
        }
        let Some(end) = after.find('}') else {
            return Err(Error::new_spanned(
                live,
                "unmatched `{` in the live message: write `{{` for a brace",
            ));
        };
        let name = &after[..end];
        if !args.iter().any(|a| a.name == name) {
            let known: Vec<String> = args.iter().map(|a| format!("`{}`", a.name)).collect();
            let known = if known.is_empty() {
                "this call site records none: add `args(...)`".to_owned()
            } else {
                format!("its args are {}", known.join(", "))
            };
            return Err(Error::new_spanned(
                live,
                format!("the live message names `{{{name}}}`, which is not an arg; {known}"),
            ));
        }
        any = true;
        rest = &after[end + 1..];
    }
    Ok(any)
}

/// A flag's value: `true` when written alone, else the `true` or `false` after its `=`.
fn flag_value(input: ParseStream, option: &str) -> syn::Result<bool> {
    if !input.peek(Token![=]) {
        return Ok(true);
    }
    input.parse::<Token![=]>()?;
    if input.peek(LitBool) {
        return Ok(input.parse::<LitBool>()?.value);
    }
    let tokens = value_tokens(input)?;
    Err(Error::new_spanned(
        tokens,
        format!("`{option}` takes `true` or `false` (or write just `{option}`)"),
    ))
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
