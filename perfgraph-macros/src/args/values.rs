//! Each kind of option value: a string literal, a small integer, a flag, an args list (and the live
//! message's placeholders checked against it), and the tokens of a bad one for the error's span.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::{Error, Ident, LitBool, LitInt, LitStr, Token};

use super::{Arg, Errors, MAX_ARG_NAME, MAX_ARGS};

/// The tokens up to the next comma, for an error span.
pub(super) fn value_tokens(input: ParseStream) -> syn::Result<proc_macro2::TokenStream> {
    let mut tokens = proc_macro2::TokenStream::new();
    while !input.is_empty() && !input.peek(Token![,]) {
        let tt: proc_macro2::TokenTree = input.parse()?;
        tokens.extend([tt]);
    }
    Ok(tokens)
}

/// A string literal as `option`'s value; anything else is an error naming the `example`.
pub(super) fn string_value(input: ParseStream, option: &str, example: &str) -> syn::Result<LitStr> {
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
pub(super) fn int_value(
    input: ParseStream,
    option: &str,
    max: u8,
    expects: &str,
) -> syn::Result<(u8, Span)> {
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
pub(super) fn args_value(input: ParseStream, key: Span) -> syn::Result<Vec<Arg>> {
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
pub(super) fn flag_value(input: ParseStream, option: &str) -> syn::Result<bool> {
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
