//! Go's regular expressions (`regexp`, RE2 syntax with Perl extensions) for Crest.
//!
//! Kubernetes checks `pattern`s and CEL's `matches`, `find` and `findAll` with Go's
//! `regexp.Compile`, and reports its errors verbatim ("error parsing regexp: missing closing ):
//! `a(`"). The `regex` crate's syntax differs (`[[]`, `\Q..\E`, `\pN` names, flag letters,
//! repeat and nesting limits, Unicode `\d`, duplicate group names), so validating with it would
//! turn valid patterns away, let invalid ones in and word errors differently.
//!
//! - [`check`] parses as Go's `regexp/syntax` does (`parse`, a step-for-step port of Go 1.23's
//!   parser: the same stack, literal merging, alternation factoring and class arithmetic), so
//!   the first error Go finds is the one reported, with Go's code and fragment, and Go's
//!   limits apply: repeat counts (1000, also nested), tree height (1000), compiled size and
//!   class runes ("expression too large").
//! - [`compile`] turns the parsed tree into an equivalent `regex` crate expression (`emit`:
//!   explicit classes, ASCII `\d`/`\w`/`\s`/`\b`, Go's case folding) and compiles that.
//!
//! Unicode data (`unicode`): the categories and scripts of Go's `unicode` package (Unicode
//! 15.0) and its simple case folding, taken from `regex-syntax` restricted to what Unicode 15.0
//! assigned. `\p{..}` names are Go 1.23's: case-sensitive, no long aliases.

mod emit;
mod error;
mod parse;
mod unicode;

pub use error::{Error, ErrorCode};

/// Checks `pattern` as Go's `regexp.Compile` parses it (`syntax.Parse(pattern, syntax.Perl)`).
pub fn check(pattern: &str) -> Result<(), Error> {
    parse::parse(pattern, parse::PERL).map(|_| ())
}

/// The `regex` crate expression with the meaning `pattern` has in Go.
pub fn translate(pattern: &str) -> Result<String, Error> {
    let tree = parse::parse(pattern, parse::PERL)?;
    Ok(emit::emit(&tree))
}

/// Limits for the `regex` crate. Go's own limits are enforced by the parser; these let Go's
/// expressions through (nesting up to Go's height of 1000, `\pL{1000}`, whose UTF-8 automaton
/// takes some 50 MB) while bounding what one compilation may allocate. Beyond it the error is
/// Go's "expression too large", where Go (one instruction per class) would still accept.
const NEST_LIMIT: u32 = 10_000;
const SIZE_LIMIT: usize = 64 << 20;

/// Go's `regexp.Compile`: a matcher with Go's semantics, or Go's error.
pub fn compile(pattern: &str) -> Result<regex::Regex, Error> {
    let tree = parse::parse(pattern, parse::PERL)?;
    let src = emit::emit(&tree);
    let build = || {
        regex::RegexBuilder::new(&src)
            .nest_limit(NEST_LIMIT)
            .size_limit(SIZE_LIMIT)
            .build()
    };
    // The regex crate recurses on nesting: give tall expressions room.
    let built = if src.len() > 4096 || src.matches('(').count() > 64 {
        stacker::grow(64 << 20, build)
    } else {
        build()
    };
    built.map_err(|e| Error {
        code: match e {
            regex::Error::CompiledTooBig(_) => ErrorCode::Large,
            _ => ErrorCode::InternalError,
        },
        expr: pattern.to_string(),
    })
}

#[cfg(test)]
mod tests;
