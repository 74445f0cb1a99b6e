//! Code generation: the `static` call site and the scope guard.

use proc_macro2::{Delimiter, Group, Span, TokenStream};
use quote::{ToTokens, quote};
use syn::parse::{ParseStream, Parser};
use syn::{Attribute, Error, Ident, Item, LitStr, Path, Signature, Token, Visibility};

use crate::args::{Errors, Options};

/// The section's name as the macros declare it.
pub enum NameSource {
    /// A literal (`name = "..."`, or `time_section!`'s first argument).
    Given(LitStr),
    /// The enclosing function, resolved by the runtime from a nested item's type name.
    Function,
}

/// `let __perfgraph_guard = { static SECTION ...; enter(&SECTION, level) };`
///
/// The guard's name is `mixed_site`, so user code can neither see it nor clash with it, and two
/// `time_section!` in one block each keep their own guard alive to the end of the block.
pub fn guard_statement(name: NameSource, options: &Options) -> TokenStream {
    let krate = krate(options);
    let private = quote!(#krate::__private);
    let level = options.level.map_or(1u8, |(level, _)| level);
    let guard = Ident::new("__perfgraph_guard", Span::mixed_site());
    let site = site(name, options);
    let Some(values) = arg_values(options) else {
        return quote! {
            let #guard = {
                let __perfgraph_site: &'static #private::Section = #site;
                #private::enter(__perfgraph_site, #level)
            };
        };
    };
    let fill = options.fill;
    quote! {
        let #guard = {
            let __perfgraph_site: &'static #private::Section = #site;
            #private::with_args(
                #private::enter(__perfgraph_site, #level),
                __perfgraph_site,
                #fill,
                || #values,
            )
        };
    }
}

/// `{ use ...; [value, ...] }`: the args' values as an array of `ArgValue`s, each expression borrowed (a
/// primitive is copied, anything else formatted with `Display`); `None` without `args`.
fn arg_values(options: &Options) -> Option<TokenStream> {
    let (args, _) = options.args.as_ref()?;
    let krate = krate(options);
    let private = quote!(#krate::__private);
    let values = args.iter().map(|a| {
        let expr = match &a.value {
            Some(e) => quote!(#e),
            None => {
                let name = &a.name;
                quote!(#name)
            }
        };
        // Spanned at the expression, so a value that is neither a number, a bool nor `Display` is an
        // error under it.
        let span = syn::spanned::Spanned::span(&expr);
        quote::quote_spanned!(span=> (&&#private::Wrap(&(#expr))).__perfgraph_arg())
    });
    Some(quote! {
        {
            #[allow(unused_imports)]
            use #private::{ViaDisplay as _, ViaPrimitive as _};
            [#(#values),*]
        }
    })
}

/// `{ static SECTION = ...; &SECTION }`: the call site, registered at its first use.
fn site(name: NameSource, options: &Options) -> TokenStream {
    let krate = krate(options);
    let private = quote!(#krate::__private);
    let level = options.level.map_or(1u8, |(level, _)| level);
    let live = match &options.live {
        Some(message) => quote!(::core::option::Option::Some(#message)),
        None => quote!(::core::option::Option::None),
    };
    let dots = options.dots.unwrap_or(false);
    let cpu = options.cpu.unwrap_or(false);
    let arg_names: Vec<String> = options
        .args
        .iter()
        .flat_map(|(args, _)| {
            args.iter()
                .map(|a| syn::ext::IdentExt::unraw(&a.name).to_string())
        })
        .collect();
    let (here, name) = match name {
        NameSource::Given(lit) => (quote!(), quote!(#private::Name::Given(#lit))),
        NameSource::Function => (
            quote!(
                fn __perfgraph_here() {}
            ),
            quote!(#private::Name::FromFn(|| ::core::any::type_name_of_val(&__perfgraph_here))),
        ),
    };
    quote! {
        {
            #here
            static __PERFGRAPH_SECTION: #private::Section = #private::Section::new(#private::SectionMeta {
                name: #name,
                level: #level,
                live: #live,
                dots: #dots,
                cpu: #cpu,
                file: ::core::file!(),
                line: ::core::line!(),
                module_path: ::core::module_path!(),
                args: &[#(#arg_names),*],
            });
            &__PERFGRAPH_SECTION
        }
    }
}

/// `event!`: `{ static SITE = ...; event(&SITE, level, || [args]) }`.
pub fn event(message: LitStr, options: &Options) -> TokenStream {
    let krate = krate(options);
    let private = quote!(#krate::__private);
    let level = options.level.map_or(1u8, |(level, _)| level);
    let names: Vec<String> = options
        .args
        .iter()
        .flat_map(|(args, _)| {
            args.iter()
                .map(|a| syn::ext::IdentExt::unraw(&a.name).to_string())
        })
        .collect();
    let values = arg_values(options).unwrap_or_else(|| quote!([]));
    quote! {
        {
            static __PERFGRAPH_EVENT: #private::EventSite =
                #private::EventSite::new(#message, &[#(#names),*]);
            #private::event(&__PERFGRAPH_EVENT, #level, || #values)
        }
    }
}

/// `counter!`: `{ static SITE = ...; counter(&SITE, value) }`.
pub fn counter(name: LitStr, value: &syn::Expr, options: &Options) -> TokenStream {
    let krate = krate(options);
    let private = quote!(#krate::__private);
    // Spanned at the value, so one that is no number is an error under it.
    let span = syn::spanned::Spanned::span(value);
    let call = quote::quote_spanned!(span=> #private::counter(&__PERFGRAPH_COUNTER, #value));
    quote! {
        {
            static __PERFGRAPH_COUNTER: #private::CounterSite = #private::CounterSite::new(#name);
            #call
        }
    }
}

/// `time_future!`: the future wrapped in `Timed`, which enters the section on every poll.
pub fn timed_future(name: NameSource, future: TokenStream, options: &Options) -> TokenStream {
    let krate = krate(options);
    let level = options.level.map_or(1u8, |(level, _)| level);
    let site = site(name, options);
    let Some(values) = arg_values(options) else {
        return quote! {
            #krate::Timed::new(#site, #level, #future)
        };
    };
    let fill = options.fill;
    // The args are taken before the future is made: it may take (move) what they borrow.
    quote! {
        {
            let __perfgraph_site: &'static #krate::__private::Section = #site;
            let __perfgraph_args =
                #krate::__private::future_args(__perfgraph_site, #level, #fill, || #values);
            #krate::Timed::new(__perfgraph_site, #level, #future).with_args(__perfgraph_args)
        }
    }
}

fn krate(options: &Options) -> TokenStream {
    match &options.krate {
        Some(path) => path.to_token_stream(),
        None => {
            let default: Path = syn::parse_quote!(::perfgraph_core);
            default.to_token_stream()
        }
    }
}

/// A function `#[timed]` can instrument, read as tracing-attributes' `MaybeItemFn` does: attributes,
/// visibility and signature parsed, the body kept as raw tokens. The body is never re-parsed or re-printed,
/// so every token keeps its span (a type error stays on the user's code), a body syn cannot parse still
/// expands, and big bodies cost the macro nothing.
pub struct TimedFn {
    /// Outer attributes and doc comments, as written.
    attrs: Vec<Attribute>,
    vis: Visibility,
    sig: Signature,
    /// The body's braces, for their span.
    brace: Group,
    /// `#![...]` at the top of the body: they must stay first.
    inner_attrs: Vec<Attribute>,
    /// The rest of the body, untouched.
    body: TokenStream,
}

/// Checks that `item` is a function `#[timed]` can instrument. Reports every problem of the signature at
/// once (`const`, no body), each at its own tokens.
pub fn parse_function(item: TokenStream) -> syn::Result<TimedFn> {
    let parser = |input: ParseStream| {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        if let Err(e) = input.fork().parse::<Signature>() {
            return Err(not_a_function(input).unwrap_or(e));
        }
        let sig: Signature = input.parse()?;
        let mut errors = Errors::default();
        if let Some(token) = &sig.constness {
            errors.push(Error::new_spanned(
                token,
                "#[timed] cannot time a `const fn`: it reads the clock at run time; remove `const` or the \
                 attribute",
            ));
        }
        if input.peek(Token![;]) {
            let semi: Token![;] = input.parse()?;
            errors.push(Error::new_spanned(
                quote!(#sig #semi),
                "#[timed] needs a function body: put it on the trait method's implementations, or give the \
                 method a default body",
            ));
        }
        errors.finish(())?;
        let brace: Group = input.parse()?;
        if brace.delimiter() != Delimiter::Brace {
            return Err(Error::new_spanned(
                brace,
                "expected the function body `{ ... }`",
            ));
        }
        let (inner_attrs, body) = (|body: ParseStream| {
            Ok((
                body.call(Attribute::parse_inner)?,
                body.parse::<TokenStream>()?,
            ))
        })
        .parse2(brace.stream())?;
        Ok(TimedFn {
            attrs,
            vis,
            sig,
            brace,
            inner_attrs,
            body,
        })
    };
    parser.parse2(item)
}

/// The error for `#[timed]` on an item that is not a function, under the item's keyword and name (not the
/// whole item). `None` when it is no well-formed item either: the signature's own syntax error is better.
fn not_a_function(input: ParseStream) -> Option<Error> {
    let rest: TokenStream = input.fork().parse().ok()?;
    let item = syn::parse2::<Item>(rest.clone()).ok()?;
    let (kind, tokens) = match &item {
        Item::Struct(i) => ("a struct", pair(&i.struct_token, &i.ident)),
        Item::Enum(i) => ("an enum", pair(&i.enum_token, &i.ident)),
        Item::Union(i) => ("a union", pair(&i.union_token, &i.ident)),
        Item::Impl(i) => (
            "an impl block (put it on the methods inside)",
            pair(&i.impl_token, &i.self_ty),
        ),
        Item::Trait(i) => (
            "a trait (put it on the methods' bodies)",
            pair(&i.trait_token, &i.ident),
        ),
        Item::Mod(i) => ("a module", pair(&i.mod_token, &i.ident)),
        Item::Const(i) => ("a const", pair(&i.const_token, &i.ident)),
        Item::Static(i) => ("a static", pair(&i.static_token, &i.ident)),
        Item::Type(i) => ("a type alias", pair(&i.type_token, &i.ident)),
        Item::Use(i) => ("a use declaration", i.to_token_stream()),
        Item::Macro(i) => ("a macro invocation", i.mac.path.to_token_stream()),
        Item::ExternCrate(i) => ("an extern crate", pair(&i.extern_token, &i.ident)),
        Item::ForeignMod(i) => ("an extern block", i.abi.to_token_stream()),
        _ => ("this item", rest),
    };
    Some(Error::new_spanned(
        tokens,
        format!("#[timed] applies to functions and methods with a body, not to {kind}"),
    ))
}

impl TimedFn {
    /// Checks that every arg written as a bare name (`args(tile)`) names one of the function's
    /// parameters; an error under each that does not.
    pub fn check_args(&self, args: &[crate::args::Arg]) -> syn::Result<()> {
        let params: Vec<String> = self
            .sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                syn::FnArg::Receiver(_) => Some("self".to_owned()),
                syn::FnArg::Typed(t) => match &*t.pat {
                    syn::Pat::Ident(p) => Some(p.ident.to_string()),
                    _ => None,
                },
            })
            .collect();
        let mut errors = Errors::default();
        for a in args.iter().filter(|a| a.value.is_none()) {
            if !params.iter().any(|p| a.name == p) {
                let fn_name = &self.sig.ident;
                errors.push(Error::new_spanned(
                    &a.name,
                    format!(
                        "`{}` is not a parameter of `{fn_name}`: `args(...)` on #[timed] names the \
                         function's parameters, or records an expression as `{} = ...`",
                        a.name, a.name
                    ),
                ));
            }
        }
        errors.finish(())
    }
}

fn pair(a: &impl ToTokens, b: &impl ToTokens) -> TokenStream {
    quote!(#a #b)
}

/// The function with the guard as its first statement (after the body's inner attributes); attributes,
/// visibility, signature and body tokens untouched.
pub fn timed_function(function: TimedFn, name: NameSource, options: &Options) -> TokenStream {
    let TimedFn {
        attrs,
        vis,
        sig,
        brace,
        inner_attrs,
        body,
    } = function;
    let inner = if sig.asyncness.is_some() {
        // As tracing-attributes does for `#[instrument] async fn`: the body becomes an `async move` block
        // (which takes the arguments), awaited inside a future that enters the section on every poll.
        let future = timed_future(name, quote!(async move { #body }), options);
        quote!(#future.await)
    } else {
        let guard = guard_statement(name, options);
        quote!(#guard #body)
    };
    let mut block = Group::new(Delimiter::Brace, quote!(#(#inner_attrs)* #inner));
    block.set_span(brace.span());
    quote!(#(#attrs)* #vis #sig #block)
}
