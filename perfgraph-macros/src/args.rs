//! Parsing the options of `#[timed(...)]` and `time_section!(...)` into a typed struct, with a spanned error
//! for every mistake.

use proc_macro2::Span;
use quote::ToTokens;
use syn::parse::{Parse, ParseStream};
use syn::{Error, LitBool, LitInt, LitStr, Path, Token};

mod kw {
    syn::custom_keyword!(name);
    syn::custom_keyword!(level);
    syn::custom_keyword!(live);
    syn::custom_keyword!(dots);
}

/// What `#[timed]` accepts, for error messages.
pub const TIMED_OPTIONS: &str = "`name = \"...\"`, `level = 0..=3`, `live = \"...\"`, `dots` (or `dots = true|false`), `crate = \"path\"`";
/// What `time_section!` accepts after its name, for error messages.
pub const SECTION_OPTIONS: &str =
    "`level = 0..=3`, `live = \"...\"`, `dots` (or `dots = true|false`), `crate = \"path\"`";

/// Options common to both macros, each with the span of the option that set it.
#[derive(Default)]
pub struct Options {
    pub name: Option<LitStr>,
    pub level: Option<(u8, Span)>,
    pub live: Option<LitStr>,
    pub dots: Option<bool>,
    pub krate: Option<Path>,
}

/// `#[timed(options)]`.
pub struct TimedArgs {
    pub options: Options,
}

/// `time_section!("name", options)`.
pub struct SectionArgs {
    pub name: LitStr,
    pub options: Options,
}

/// Which macro is parsing: decides whether `name = ...` is allowed and what the errors list.
#[derive(Clone, Copy, PartialEq)]
enum Context {
    Timed,
    Section,
}

impl Context {
    fn accepted(self) -> &'static str {
        match self {
            Context::Timed => TIMED_OPTIONS,
            Context::Section => SECTION_OPTIONS,
        }
    }
}

impl Parse for TimedArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        Ok(TimedArgs {
            options: parse_options(input, Context::Timed)?,
        })
    }
}

impl Parse for SectionArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let name = if input.peek(LitStr) {
            input.parse::<LitStr>()?
        } else if input.is_empty() {
            return Err(Error::new(
                Span::call_site(),
                "time_section! needs a section name first: `time_section!(\"name\")`, optionally followed by \
                 options: ".to_owned() + SECTION_OPTIONS,
            ));
        } else {
            let tokens: proc_macro2::TokenStream = input.parse()?;
            return Err(Error::new_spanned(
                tokens,
                "time_section! takes the section name as a string literal first, e.g. \
                 `time_section!(\"residual\", level = 2)`",
            ));
        };
        non_empty(
            &name,
            "the section name must not be empty: say what the section does, e.g. `time_section!(\"residual\")`",
        )?;
        let options = if input.is_empty() {
            Options::default()
        } else {
            input.parse::<Token![,]>()?;
            parse_options(input, Context::Section)?
        };
        Ok(SectionArgs { name, options })
    }
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
fn parse_options(input: ParseStream, ctx: Context) -> syn::Result<Options> {
    let mut options = Options::default();
    let mut errors: Option<Error> = None;
    let mut push = |e: Error| match &mut errors {
        Some(all) => all.combine(e),
        None => errors = Some(e),
    };
    while !input.is_empty() {
        if let Err(e) = parse_option(input, ctx, &mut options) {
            push(e);
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
    match errors {
        Some(e) => Err(e),
        None => Ok(options),
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

fn duplicate(span: Span, option: &str) -> Error {
    Error::new(span, format!("duplicate option `{option}`: give it once"))
}

fn parse_option(input: ParseStream, ctx: Context, o: &mut Options) -> syn::Result<()> {
    let lookahead = input.lookahead1();
    if lookahead.peek(kw::name) {
        let key: kw::name = input.parse()?;
        if ctx == Context::Section {
            return Err(Error::new_spanned(
                key,
                "time_section! takes its name as the first argument, not as `name = ...`: \
                 `time_section!(\"residual\", level = 2)`",
            ));
        }
        equals(input, key.span, "`name = \"mesh::refine\"`")?;
        let value = string_value(input, "name", "`name = \"mesh::refine\"`")?;
        non_empty(
            &value,
            "the section name must not be empty; leave `name` out to use the function's name",
        )?;
        if o.name.is_some() {
            return Err(duplicate(key.span, "name"));
        }
        o.name = Some(value);
    } else if lookahead.peek(kw::level) {
        let key: kw::level = input.parse()?;
        equals(input, key.span, "`level = 0..=3`")?;
        let level = level_value(input)?;
        if o.level.is_some() {
            return Err(duplicate(key.span, "level"));
        }
        o.level = Some(level);
    } else if lookahead.peek(kw::live) {
        let key: kw::live = input.parse()?;
        equals(input, key.span, "`live = \"Solving nonlinear system\"`")?;
        let value = string_value(input, "live", "`live = \"Solving nonlinear system\"`")?;
        non_empty(
            &value,
            "the live message must not be empty; leave `live` out to show the section's name",
        )?;
        if o.live.is_some() {
            return Err(duplicate(key.span, "live"));
        }
        o.live = Some(value);
    } else if lookahead.peek(kw::dots) {
        let key: kw::dots = input.parse()?;
        let value = if input.peek(Token![=]) {
            input.parse::<Token![=]>()?;
            if input.peek(LitBool) {
                input.parse::<LitBool>()?.value
            } else {
                let tokens = value_tokens(input)?;
                return Err(Error::new_spanned(
                    tokens,
                    "`dots` takes `true` or `false` (or write just `dots`)",
                ));
            }
        } else {
            true
        };
        if o.dots.is_some() {
            return Err(duplicate(key.span, "dots"));
        }
        o.dots = Some(value);
    } else if lookahead.peek(Token![crate]) {
        let key: Token![crate] = input.parse()?;
        equals(input, key.span, "`crate = \"my_crate::perfgraph\"`")?;
        let value = string_value(input, "crate", "`crate = \"my_crate::perfgraph\"`")?;
        let path: Path = value.parse().map_err(|_| {
            Error::new_spanned(
                &value,
                "`crate` takes the path where perfgraph_core is reachable, e.g. `crate = \"my_crate::perfgraph\"`",
            )
        })?;
        if o.krate.is_some() {
            return Err(duplicate(key.span, "crate"));
        }
        o.krate = Some(path);
    } else {
        // Not `lookahead.error()`: its message would not say what the values look like; ours does.
        let _ = lookahead;
        let unknown = if ctx == Context::Timed && input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            let message = format!(
                "to name the section write `name = {}`; accepted options: {}",
                lit.to_token_stream(),
                ctx.accepted()
            );
            Error::new_spanned(lit, message)
        } else if input.peek(syn::Ident) {
            let ident: syn::Ident = input.parse()?;
            let message = format!(
                "unknown option `{ident}`; accepted options: {}",
                ctx.accepted()
            );
            Error::new_spanned(ident, message)
        } else {
            let tokens = value_tokens(input)?;
            let message = format!("expected an option; accepted options: {}", ctx.accepted());
            Error::new_spanned(tokens, message)
        };
        return Err(unknown);
    }
    Ok(())
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

fn level_value(input: ParseStream) -> syn::Result<(u8, Span)> {
    const ACCEPTED: &str = "`level` takes an integer from 0 to 3 (0 program phases, 1 main steps, 2 detail, \
                            3 fine detail)";
    if input.peek(LitInt) {
        let lit: LitInt = input.parse()?;
        return match lit.base10_parse::<u64>() {
            Ok(level) if level <= 3 => Ok((level as u8, lit.span())),
            _ => Err(Error::new_spanned(
                lit,
                format!("level out of range; {ACCEPTED}"),
            )),
        };
    }
    let tokens = value_tokens(input)?;
    if tokens.is_empty() {
        return Err(input.error(ACCEPTED));
    }
    Err(Error::new_spanned(tokens, ACCEPTED))
}
