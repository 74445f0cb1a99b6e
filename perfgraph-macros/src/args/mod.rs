//! Parsing the options of `#[timed(...)]`, `time_section!(...)` and `time_future!(...)` into a typed struct, with a spanned error
//! for every mistake.
//!
//! One table, `OPTIONS` in [`options`], says everything about each option: its key, how the error messages
//! list it, which macro accepts it, what value it takes and which field of [`Options`] holds it. Parsing
//! and the "accepted options" lists both read it, so a new option is one row there plus its field.
//!
//! Here: what the parse gives (`Options`, each macro's arguments) and each macro's positional arguments;
//! [`options`]: the table and the options' parsing; [`values`]: each kind of option value.

mod options;
mod values;

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Error, Ident, LitStr, Path, Token};

use options::{Macro, accepted_options, parse_options};

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
pub(super) fn non_empty(lit: &LitStr, message: &str) -> syn::Result<()> {
    if lit.value().trim().is_empty() {
        Err(Error::new_spanned(lit, message))
    } else {
        Ok(())
    }
}
