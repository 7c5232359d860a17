//! Recursive-descent parser for CEL (cel-spec `CEL.g4`), with macro expansion and the optional
//! syntax (`a.?b`, `a[?b]`, `[?x]`, `{?k: v}`, `T{?f: v}`).
//!
//! Why hand-written rather than the `cel` crate: its ANTLR-generated parser pulls in a large
//! runtime, builds its own AST tied to its interpreter, and does not bound recursion (deep input
//! overflows the stack, which a fuzzer finds at once). CEL's grammar is small; this parser keeps
//! cel-go's node shapes, ids, source positions, error wording (`Syntax error: mismatched input
//! ... expecting ...`) and limits (recursion depth 250, 100,000 code points).

use std::sync::Arc;

use crate::ast::*;
use crate::errors::{Issue, Issues};
use crate::lexer::{tokenize, Tok, Token};

/// The accumulator variable of macro comprehensions (cel-go's name).
pub const ACCU_VAR: &str = "@result";

#[derive(Debug, Clone)]
pub struct ParserOptions {
    /// Maximum nesting of expressions (cel-go default 250).
    pub max_recursion_depth: u32,
    /// Maximum length of the source in code points (cel-go default 100,000).
    pub max_code_points: usize,
    pub enable_macros: bool,
    /// `math.greatest` / `math.least` (cel-go's math extension macros), off unless the math
    /// library is added.
    pub math_macros: bool,
    /// `sortBy` (cel-go's lists extension macro), on when the lists library is added.
    pub lists_macros: bool,
}

impl Default for ParserOptions {
    fn default() -> Self {
        ParserOptions {
            max_recursion_depth: 250,
            max_code_points: 100_000,
            enable_macros: true,
            math_macros: false,
            lists_macros: false,
        }
    }
}

pub fn parse(src: &str) -> Result<Ast, Issues> {
    parse_with(src, &ParserOptions::default())
}

pub fn parse_with(src: &str, opts: &ParserOptions) -> Result<Ast, Issues> {
    let info = SourceInfo::new(src);
    let chars: Vec<char> = src.chars().collect();
    if chars.len() > opts.max_code_points {
        let mut issues = Issues::new(Arc::new(info));
        issues.issues.push(Issue {
            offset: None,
            message: format!(
                "expression code point size exceeds limit: size: {}, limit {}",
                chars.len(),
                opts.max_code_points
            ),
        });
        return Err(issues);
    }
    let (toks, lex_errs) = tokenize(&chars);
    let mut p = Parser {
        toks,
        pos: 0,
        next_id: 1,
        info,
        depths: vec![0],
        recursion: 0,
        opts: opts.clone(),
        errors: lex_errs
            .into_iter()
            .map(|e| Issue {
                offset: Some(e.offset),
                message: e.message,
            })
            .collect(),
    };
    let result = p.parse_start();
    if !p.errors.is_empty() || result.is_err() {
        let mut issues = Issues::new(Arc::new(p.info));
        issues.issues = p.errors;
        return Err(issues);
    }
    let expr = result.map_err(|_| Issues::new(Arc::new(SourceInfo::new(src))))?;
    Ok(Ast {
        expr,
        source: Arc::new(p.info),
        next_id: p.next_id,
    })
}

/// An error has been recorded in `Parser::errors`; parsing stops.
struct Fail;
type PResult<T> = Result<T, Fail>;

const EXPR_START: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// Free stack below which recursion moves to a new stack segment, and that segment's size.
pub(crate) const RED_ZONE: usize = 64 * 1024;
pub(crate) const STACK_CHUNK: usize = 1024 * 1024;

/// What may follow `{` (cel-go's expected set there).
const MAP_START: &str = "{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

/// Identifiers CEL reserves (besides the literal keywords `true`, `false`, `null` and `in`).
pub const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    next_id: ExprId,
    info: SourceInfo,
    /// Tree depth of each node, by id, to enforce the recursion limit on the built tree too
    /// (long operator chains nest without nesting the parser).
    depths: Vec<u32>,
    recursion: u32,
    opts: ParserOptions,
    errors: Vec<Issue>,
}

impl Parser {
    fn tok(&self) -> &Tok {
        &self.toks[self.pos].tok
    }

    fn peek_tok(&self, k: usize) -> &Tok {
        let i = (self.pos + k).min(self.toks.len() - 1);
        &self.toks[i].tok
    }

    fn can_start_expr(&self) -> bool {
        matches!(
            self.tok(),
            Tok::LBracket
                | Tok::LBrace
                | Tok::LParen
                | Tok::Dot
                | Tok::Minus
                | Tok::Bang
                | Tok::True
                | Tok::False
                | Tok::Null
                | Tok::Int(_)
                | Tok::Uint(_)
                | Tok::Float(_)
                | Tok::Str(_)
                | Tok::Bytes(_)
                | Tok::Ident(_)
        )
    }

    fn offset(&self) -> usize {
        self.toks[self.pos].start
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn error<T>(&mut self, offset: usize, message: String) -> PResult<T> {
        self.errors.push(Issue {
            offset: Some(offset),
            message,
        });
        Err(Fail)
    }

    fn syntax_error<T>(&mut self, expecting: &str) -> PResult<T> {
        let t = &self.toks[self.pos];
        let text = t.text.clone();
        let off = t.start;
        self.error(
            off,
            format!("Syntax error: mismatched input '{text}' expecting {expecting}"),
        )
    }

    fn expect(&mut self, want: Tok, shown: &str) -> PResult<Token> {
        if *self.tok() == want {
            return Ok(self.bump());
        }
        // ANTLR's single-token deletion: one stray token before the expected one.
        if *self.peek_tok(1) == want {
            let t = &self.toks[self.pos];
            let (text, off) = (t.text.clone(), t.start);
            return self.error(
                off,
                format!("Syntax error: extraneous input '{text}' expecting {shown}"),
            );
        }
        self.syntax_error(shown)
    }

    /// Creates a node, recording its position and checking the tree depth limit.
    fn mk(&mut self, offset: usize, kind: ExprKind) -> PResult<Expr> {
        let id = self.next_id;
        self.next_id += 1;
        let e = Expr { id, kind };
        let depth = e
            .children()
            .iter()
            .map(|c| self.depths.get(c.id as usize).copied().unwrap_or(0))
            .max()
            .unwrap_or(0)
            + 1;
        self.depths.push(depth);
        self.info.set_position(id, offset);
        if depth > self.opts.max_recursion_depth {
            return self.error(
                offset,
                format!(
                    "expression recursion limit exceeded: {}",
                    self.opts.max_recursion_depth
                ),
            );
        }
        Ok(e)
    }

    fn call(&mut self, offset: usize, function: &str, args: Vec<Expr>) -> PResult<Expr> {
        self.mk(
            offset,
            ExprKind::Call {
                target: None,
                function: function.to_string(),
                args,
            },
        )
    }

    fn parse_start(&mut self) -> PResult<Expr> {
        let e = self.expr()?;
        if *self.tok() != Tok::Eof {
            return self.syntax_error("<EOF>");
        }
        Ok(e)
    }

    fn expr(&mut self) -> PResult<Expr> {
        self.recursion += 1;
        if self.recursion > self.opts.max_recursion_depth {
            let off = self.offset();
            return self.error(
                off,
                format!(
                    "expression recursion limit exceeded: {}",
                    self.opts.max_recursion_depth
                ),
            );
        }
        // Grow the stack on demand: 250 nested levels of debug-build frames exceed a 2 MiB
        // thread stack.
        let r = stacker::maybe_grow(RED_ZONE, STACK_CHUNK, || self.conditional());
        self.recursion -= 1;
        r
    }

    fn conditional(&mut self) -> PResult<Expr> {
        let cond = self.or()?;
        if *self.tok() != Tok::Question {
            return Ok(cond);
        }
        let off = self.bump().start;
        let then = self.or()?;
        self.expect(Tok::Colon, "':'")?;
        let otherwise = self.expr()?;
        self.call(off, "_?_:_", vec![cond, then, otherwise])
    }

    fn or(&mut self) -> PResult<Expr> {
        let first = self.and()?;
        let mut terms = vec![first];
        let mut ops = vec![];
        while *self.tok() == Tok::Or {
            ops.push(self.bump().start);
            terms.push(self.and()?);
        }
        self.balance("_||_", terms, &ops)
    }

    fn and(&mut self) -> PResult<Expr> {
        let first = self.relation()?;
        let mut terms = vec![first];
        let mut ops = vec![];
        while *self.tok() == Tok::And {
            ops.push(self.bump().start);
            terms.push(self.relation()?);
        }
        self.balance("_&&_", terms, &ops)
    }

    /// Builds a balanced tree of a chain of `&&` or `||` (as cel-go does), keeping the tree
    /// shallow for long chains.
    fn balance(&mut self, op: &str, mut terms: Vec<Expr>, ops: &[usize]) -> PResult<Expr> {
        if terms.len() == 1 {
            return terms.pop().ok_or(Fail);
        }
        let mid = ops.len() / 2;
        let right_terms = terms.split_off(mid + 1);
        let left = self.balance(op, terms, &ops[..mid])?;
        let right = self.balance(op, right_terms, &ops[mid + 1..])?;
        self.call(ops[mid], op, vec![left, right])
    }

    fn relation(&mut self) -> PResult<Expr> {
        let mut left = self.addition()?;
        loop {
            let op = match self.tok() {
                Tok::Lt => "_<_",
                Tok::Le => "_<=_",
                Tok::Gt => "_>_",
                Tok::Ge => "_>=_",
                Tok::EqEq => "_==_",
                Tok::Ne => "_!=_",
                Tok::In => "@in",
                _ => return Ok(left),
            };
            let off = self.bump().start;
            let right = self.addition()?;
            left = self.call(off, op, vec![left, right])?;
        }
    }

    fn addition(&mut self) -> PResult<Expr> {
        let mut left = self.multiplication()?;
        loop {
            let op = match self.tok() {
                Tok::Plus => "_+_",
                Tok::Minus => "_-_",
                _ => return Ok(left),
            };
            let off = self.bump().start;
            let right = self.multiplication()?;
            left = self.call(off, op, vec![left, right])?;
        }
    }

    fn multiplication(&mut self) -> PResult<Expr> {
        let mut left = self.unary()?;
        loop {
            let op = match self.tok() {
                Tok::Star => "_*_",
                Tok::Slash => "_/_",
                Tok::Percent => "_%_",
                _ => return Ok(left),
            };
            let off = self.bump().start;
            let right = self.unary()?;
            left = self.call(off, op, vec![left, right])?;
        }
    }

    fn unary(&mut self) -> PResult<Expr> {
        match self.tok() {
            Tok::Bang => {
                let off = self.offset();
                let mut n = 0;
                while *self.tok() == Tok::Bang {
                    self.bump();
                    n += 1;
                }
                let m = self.member()?;
                // cel-go drops an even number of repeated operators.
                if n % 2 == 0 {
                    Ok(m)
                } else {
                    self.call(off, "!_", vec![m])
                }
            }
            Tok::Minus if !matches!(self.peek_tok(1), Tok::Int(_) | Tok::Float(_)) => {
                let off = self.offset();
                let mut n = 0;
                while *self.tok() == Tok::Minus {
                    self.bump();
                    n += 1;
                }
                let m = self.member()?;
                if n % 2 == 0 {
                    Ok(m)
                } else {
                    self.call(off, "-_", vec![m])
                }
            }
            _ => self.member(),
        }
    }

    fn member(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        loop {
            match self.tok() {
                Tok::Dot => {
                    let dot = self.bump().start;
                    let optional = if *self.tok() == Tok::Question {
                        self.bump();
                        true
                    } else {
                        false
                    };
                    let (name, escaped) = match self.tok().clone() {
                        Tok::Ident(n) => (n, false),
                        Tok::EscIdent(n) => (n, true),
                        _ => return self.syntax_error("{IDENTIFIER, ESC_IDENTIFIER}"),
                    };
                    self.bump();
                    if *self.tok() == Tok::LParen {
                        let open = self.bump().start;
                        if optional || escaped {
                            let msg = if optional { "'.?'" } else { "'`'" };
                            return self.error(open, format!("unsupported syntax {msg}"));
                        }
                        let args = self.args(Tok::RParen, "')'")?;
                        e = self.receiver_call_or_macro(open, e, &name, args)?;
                    } else if optional {
                        let f = self.mk(dot, ExprKind::Literal(Literal::String(name.into())))?;
                        e = self.call(dot, "_?._", vec![e, f])?;
                    } else {
                        e = self.mk(
                            dot,
                            ExprKind::Select {
                                operand: Box::new(e),
                                field: name,
                                test_only: false,
                            },
                        )?;
                    }
                }
                Tok::LBracket => {
                    let open = self.bump().start;
                    let optional = if *self.tok() == Tok::Question {
                        self.bump();
                        true
                    } else {
                        false
                    };
                    let index = self.expr()?;
                    self.expect(Tok::RBracket, "']'")?;
                    let f = if optional { "_[?_]" } else { "_[_]" };
                    e = self.call(open, f, vec![e, index])?;
                }
                _ => return Ok(e),
            }
        }
    }

    /// Comma-separated expressions up to `close` (consumed); a trailing comma is not allowed.
    fn args(&mut self, close: Tok, shown: &str) -> PResult<Vec<Expr>> {
        let mut args = vec![];
        if *self.tok() == close {
            self.bump();
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            match self.tok() {
                Tok::Comma => {
                    self.bump();
                }
                t if *t == close => {
                    self.bump();
                    return Ok(args);
                }
                _ => {
                    let want = format!("{{',', {shown}}}");
                    return self.syntax_error(&want);
                }
            }
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let t = self.toks[self.pos].clone();
        match t.tok {
            Tok::Dot | Tok::Ident(_) => self.ident_or_call(),
            Tok::LParen => {
                self.bump();
                let e = self.expr()?;
                self.expect(Tok::RParen, "')'")?;
                Ok(e)
            }
            Tok::LBracket => self.list(),
            Tok::LBrace => {
                let open = self.bump().start;
                let fields = self.entries(open, false)?;
                Ok(fields)
            }
            Tok::Minus => {
                // A negative numeric literal (`-1`, `-2.5`): the sign is part of the literal.
                let minus = self.bump().start;
                let n = self.bump();
                self.number(minus, &n, true)
            }
            Tok::Int(_) | Tok::Uint(_) | Tok::Float(_) => {
                let n = self.bump();
                self.number(n.start, &n, false)
            }
            Tok::Str(s) => {
                self.bump();
                self.mk(t.start, ExprKind::Literal(Literal::String(s.into())))
            }
            Tok::Bytes(b) => {
                self.bump();
                self.mk(t.start, ExprKind::Literal(Literal::Bytes(b.into())))
            }
            Tok::True | Tok::False => {
                self.bump();
                self.mk(
                    t.start,
                    ExprKind::Literal(Literal::Bool(t.tok == Tok::True)),
                )
            }
            Tok::Null => {
                self.bump();
                self.mk(t.start, ExprKind::Literal(Literal::Null))
            }
            _ => self.syntax_error(EXPR_START),
        }
    }

    fn number(&mut self, offset: usize, t: &Token, negative: bool) -> PResult<Expr> {
        let sign = if negative { "-" } else { "" };
        let lit = match &t.tok {
            Tok::Int(s) => {
                let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                    i64::from_str_radix(&format!("{sign}{h}"), 16).ok()
                } else {
                    format!("{sign}{s}").parse::<i64>().ok()
                };
                match v {
                    Some(v) => Literal::Int(v),
                    None => return self.error(offset, "invalid int literal".into()),
                }
            }
            Tok::Uint(s) if !negative => {
                let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                    u64::from_str_radix(h, 16).ok()
                } else {
                    s.parse::<u64>().ok()
                };
                match v {
                    Some(v) => Literal::Uint(v),
                    None => return self.error(offset, "invalid uint literal".into()),
                }
            }
            Tok::Float(s) => match format!("{sign}{s}").parse::<f64>() {
                Ok(v) if v.is_finite() => Literal::Double(v),
                _ => return self.error(offset, "invalid double literal".into()),
            },
            _ => {
                self.pos -= 1;
                return self.syntax_error(EXPR_START);
            }
        };
        self.mk(offset, ExprKind::Literal(lit))
    }

    fn ident_or_call(&mut self) -> PResult<Expr> {
        let start = self.offset();
        let leading_dot = if *self.tok() == Tok::Dot {
            self.bump();
            true
        } else {
            false
        };
        let Tok::Ident(name) = self.tok().clone() else {
            return self.syntax_error("IDENTIFIER");
        };
        let id_off = self.offset();
        if RESERVED.contains(&name.as_str()) {
            return self.error(id_off, format!("reserved identifier: {name}"));
        }
        self.bump();
        // `a.b.C{...}`: a message construction with a qualified type name.
        let mut k = 0;
        while *self.peek_tok(k) == Tok::Dot && matches!(self.peek_tok(k + 1), Tok::Ident(_)) {
            k += 2;
        }
        if *self.peek_tok(k) == Tok::LBrace {
            let mut type_name = if leading_dot {
                format!(".{name}")
            } else {
                name.clone()
            };
            for _ in 0..k / 2 {
                self.bump();
                if let Tok::Ident(n) = self.bump().tok {
                    type_name.push('.');
                    type_name.push_str(&n);
                }
            }
            let open = self.bump().start;
            let fields = self.struct_fields()?;
            return self.mk(open, ExprKind::Struct { type_name, fields });
        }
        let full = if leading_dot {
            format!(".{name}")
        } else {
            name
        };
        if *self.tok() == Tok::LParen {
            let open = self.bump().start;
            let args = self.args(Tok::RParen, "')'")?;
            return self.global_call_or_macro(open, &full, args);
        }
        self.mk(
            if leading_dot { start } else { id_off },
            ExprKind::Ident(full),
        )
    }

    fn list(&mut self) -> PResult<Expr> {
        let open = self.bump().start;
        let mut elements = vec![];
        let mut optional_indices = vec![];
        loop {
            if *self.tok() == Tok::RBracket {
                self.bump();
                break;
            }
            if *self.tok() == Tok::Question {
                self.bump();
                optional_indices.push(elements.len());
            }
            elements.push(self.expr()?);
            match self.tok() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBracket => {}
                _ => return self.syntax_error("{',', ']'}"),
            }
        }
        self.mk(
            open,
            ExprKind::List {
                elements,
                optional_indices,
            },
        )
    }

    /// Map literal entries after `{`, through `}`.
    fn entries(&mut self, open: usize, _unused: bool) -> PResult<Expr> {
        let mut entries = vec![];
        loop {
            if *self.tok() == Tok::RBrace {
                self.bump();
                break;
            }
            let optional = if *self.tok() == Tok::Question {
                self.bump();
                true
            } else {
                false
            };
            if entries.is_empty() && !optional && !self.can_start_expr() {
                return self.syntax_error(MAP_START);
            }
            let key = self.expr()?;
            let colon = self.expect(Tok::Colon, "':'")?.start;
            let value = self.expr()?;
            let id = self.next_id;
            self.next_id += 1;
            self.depths.push(0);
            self.info.set_position(id, colon);
            entries.push(MapEntry {
                id,
                key,
                value,
                optional,
            });
            match self.tok() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBrace => {}
                _ => return self.syntax_error("{',', '}'}"),
            }
        }
        self.mk(open, ExprKind::Map { entries })
    }

    fn struct_fields(&mut self) -> PResult<Vec<StructField>> {
        let mut fields = vec![];
        loop {
            if *self.tok() == Tok::RBrace {
                self.bump();
                return Ok(fields);
            }
            let optional = if *self.tok() == Tok::Question {
                self.bump();
                true
            } else {
                false
            };
            let name = match self.tok().clone() {
                Tok::Ident(n) | Tok::EscIdent(n) => n,
                _ => return self.syntax_error("{'?', IDENTIFIER, ESC_IDENTIFIER}"),
            };
            self.bump();
            let colon = self.expect(Tok::Colon, "':'")?.start;
            let value = self.expr()?;
            let id = self.next_id;
            self.next_id += 1;
            self.depths.push(0);
            self.info.set_position(id, colon);
            fields.push(StructField {
                id,
                name,
                value,
                optional,
            });
            match self.tok() {
                Tok::Comma => {
                    self.bump();
                }
                Tok::RBrace => {}
                _ => return self.syntax_error("{',', '}'}"),
            }
        }
    }

    // ---- macros -------------------------------------------------------------------------

    fn global_call_or_macro(&mut self, open: usize, name: &str, args: Vec<Expr>) -> PResult<Expr> {
        if self.opts.enable_macros && name == "has" && args.len() == 1 {
            let mut args = args;
            let arg = args.pop().ok_or(Fail)?;
            return match arg.kind {
                ExprKind::Select {
                    operand,
                    field,
                    test_only: false,
                } => self.mk(
                    open,
                    ExprKind::Select {
                        operand,
                        field,
                        test_only: true,
                    },
                ),
                _ => self.error(open, "invalid argument to has() macro".into()),
            };
        }
        self.call(open, name, args)
    }

    fn receiver_call_or_macro(
        &mut self,
        open: usize,
        target: Expr,
        name: &str,
        mut args: Vec<Expr>,
    ) -> PResult<Expr> {
        if self.opts.enable_macros {
            let n = args.len();
            let is_cel = matches!(&target.kind, ExprKind::Ident(t) if t == "cel");
            let is_math = matches!(&target.kind, ExprKind::Ident(t) if t == "math");
            if is_math && self.opts.math_macros && matches!(name, "greatest" | "least") {
                return self.math_macro(open, name, args);
            }
            match (name, n) {
                ("all" | "exists" | "exists_one" | "existsOne" | "filter" | "map", 2)
                    if name != "existsOne" =>
                {
                    return self.single_var_macro(open, target, name, args);
                }
                ("map", 3) => return self.single_var_macro(open, target, name, args),
                ("all" | "exists" | "existsOne" | "exists_one", 3)
                | ("transformList" | "transformMap" | "transformMapEntry", 3 | 4) => {
                    return self.two_var_macro(open, target, name, args);
                }
                ("sortBy", 2) if self.opts.lists_macros => {
                    return self.sort_by_macro(open, target, args);
                }
                ("bind", 3) if is_cel => {
                    let body = args.pop().ok_or(Fail)?;
                    let init = args.pop().ok_or(Fail)?;
                    let var = self.simple_name(&args[0])?;
                    let range = self.mk(
                        open,
                        ExprKind::List {
                            elements: vec![],
                            optional_indices: vec![],
                        },
                    )?;
                    let cond = self.lit_bool(open, false)?;
                    let step = self.ident(open, &var)?;
                    return self
                        .comprehension(open, "#unused", None, range, &var, init, cond, step, body);
                }
                ("optMap" | "optFlatMap", 2) => {
                    let body = args.pop().ok_or(Fail)?;
                    let var = self.simple_name(&args[0])?;
                    let target2 = target.clone();
                    let has = self.mk(
                        open,
                        ExprKind::Call {
                            target: Some(Box::new(target)),
                            function: "hasValue".into(),
                            args: vec![],
                        },
                    )?;
                    let value = self.mk(
                        open,
                        ExprKind::Call {
                            target: Some(Box::new(target2)),
                            function: "value".into(),
                            args: vec![],
                        },
                    )?;
                    let range = self.mk(
                        open,
                        ExprKind::List {
                            elements: vec![],
                            optional_indices: vec![],
                        },
                    )?;
                    let cond = self.lit_bool(open, false)?;
                    let step = self.ident(open, &var)?;
                    let bound = self.comprehension(
                        open, "#unused", None, range, &var, value, cond, step, body,
                    )?;
                    let some = if name == "optMap" {
                        let opt = self.ident(open, "optional")?;
                        self.mk(
                            open,
                            ExprKind::Call {
                                target: Some(Box::new(opt)),
                                function: "of".into(),
                                args: vec![bound],
                            },
                        )?
                    } else {
                        bound
                    };
                    let opt = self.ident(open, "optional")?;
                    let none = self.mk(
                        open,
                        ExprKind::Call {
                            target: Some(Box::new(opt)),
                            function: "none".into(),
                            args: vec![],
                        },
                    )?;
                    return self.call(open, "_?_:_", vec![has, some, none]);
                }
                _ => {}
            }
        }
        self.mk(
            open,
            ExprKind::Call {
                target: Some(Box::new(target)),
                function: name.to_string(),
                args,
            },
        )
    }

    /// `math.greatest(a, ...)` -> `math.@max(a)`, `math.@max(a, b)`, `math.@max([a, b, c...])`;
    /// literal arguments must be numbers (a single one may also be a list).
    fn math_macro(&mut self, open: usize, name: &str, args: Vec<Expr>) -> PResult<Expr> {
        let func = if name == "greatest" {
            "math.@max"
        } else {
            "math.@min"
        };
        if args.is_empty() {
            return self.error(
                open,
                format!("math.{name}() requires at least one argument"),
            );
        }
        for a in &args {
            let bad = match &a.kind {
                ExprKind::Literal(l) => {
                    !matches!(l, Literal::Int(_) | Literal::Uint(_) | Literal::Double(_))
                }
                ExprKind::List { .. } | ExprKind::Map { .. } | ExprKind::Struct { .. } => {
                    args.len() > 1 || !matches!(a.kind, ExprKind::List { .. })
                }
                _ => false,
            };
            if bad {
                let off = self.info.position(a.id).unwrap_or(open);
                let which = if args.len() == 1 {
                    "single argument value"
                } else {
                    "argument value"
                };
                return self.error(off, format!("math.{name}() invalid {which}"));
            }
        }
        if args.len() <= 2 {
            return self.call(open, func, args);
        }
        let list = self.mk(
            open,
            ExprKind::List {
                elements: args,
                optional_indices: vec![],
            },
        )?;
        self.call(open, func, vec![list])
    }

    /// `l.sortBy(e, key)` -> `cel.bind(@__sortBy_input__, l,
    /// @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(e, key)))`, so the keys
    /// are computed once per element and the list is evaluated once.
    fn sort_by_macro(&mut self, open: usize, target: Expr, args: Vec<Expr>) -> PResult<Expr> {
        const INPUT: &str = "@__sortBy_input__";
        if !matches!(
            target.kind,
            ExprKind::List { .. }
                | ExprKind::Select { .. }
                | ExprKind::Ident(_)
                | ExprKind::Comprehension(_)
                | ExprKind::Call { .. }
        ) {
            let off = self.info.position(target.id).unwrap_or(open);
            return self.error(
                off,
                "sortBy can only be applied to a list, identifier, comprehension, call or select expression".into(),
            );
        }
        let input = self.ident(open, INPUT)?;
        let keys = self.single_var_macro(open, input, "map", args)?;
        let input = self.ident(open, INPUT)?;
        let sorted = self.mk(
            open,
            ExprKind::Call {
                target: Some(Box::new(input)),
                function: "@sortByAssociatedKeys".into(),
                args: vec![keys],
            },
        )?;
        let range = self.mk(
            open,
            ExprKind::List {
                elements: vec![],
                optional_indices: vec![],
            },
        )?;
        let cond = self.lit_bool(open, false)?;
        let step = self.ident(open, INPUT)?;
        self.comprehension(
            open, "#unused", None, range, INPUT, target, cond, step, sorted,
        )
    }

    fn simple_name(&mut self, e: &Expr) -> PResult<String> {
        match &e.kind {
            ExprKind::Ident(n) if !n.starts_with('.') => Ok(n.clone()),
            _ => {
                let off = self.info.position(e.id).unwrap_or(0);
                self.error(off, "argument must be a simple name".into())
            }
        }
    }

    fn ident(&mut self, off: usize, name: &str) -> PResult<Expr> {
        self.mk(off, ExprKind::Ident(name.to_string()))
    }

    fn lit_bool(&mut self, off: usize, b: bool) -> PResult<Expr> {
        self.mk(off, ExprKind::Literal(Literal::Bool(b)))
    }

    #[allow(clippy::too_many_arguments)]
    fn comprehension(
        &mut self,
        off: usize,
        iter_var: &str,
        iter_var2: Option<String>,
        iter_range: Expr,
        accu_var: &str,
        accu_init: Expr,
        loop_condition: Expr,
        loop_step: Expr,
        result: Expr,
    ) -> PResult<Expr> {
        self.mk(
            off,
            ExprKind::Comprehension(Box::new(Comprehension {
                iter_var: iter_var.to_string(),
                iter_var2,
                iter_range,
                accu_var: accu_var.to_string(),
                accu_init,
                loop_condition,
                loop_step,
                result,
            })),
        )
    }

    /// `@not_strictly_false(e)`: true unless `e` is false (errors keep the loop going).
    fn not_strictly_false(&mut self, off: usize, e: Expr) -> PResult<Expr> {
        self.call(off, "@not_strictly_false", vec![e])
    }

    /// The init, condition, step and result of `all`, `exists` and `exists_one`/`existsOne`
    /// (with one iteration variable or two: the body alone differs).
    fn quantifier(
        &mut self,
        open: usize,
        name: &str,
        body: Expr,
    ) -> PResult<(Expr, Expr, Expr, Expr)> {
        let accu = |p: &mut Self| p.ident(open, ACCU_VAR);
        Ok(match name {
            "all" => {
                let init = self.lit_bool(open, true)?;
                let a = accu(self)?;
                let cond = self.not_strictly_false(open, a)?;
                let a = accu(self)?;
                let step = self.call(open, "_&&_", vec![a, body])?;
                (init, cond, step, accu(self)?)
            }
            "exists" => {
                let init = self.lit_bool(open, false)?;
                let a = accu(self)?;
                let not = self.call(open, "!_", vec![a])?;
                let cond = self.not_strictly_false(open, not)?;
                let a = accu(self)?;
                let step = self.call(open, "_||_", vec![a, body])?;
                (init, cond, step, accu(self)?)
            }
            _ => {
                let init = self.mk(open, ExprKind::Literal(Literal::Int(0)))?;
                let cond = self.lit_bool(open, true)?;
                let a = accu(self)?;
                let one = self.mk(open, ExprKind::Literal(Literal::Int(1)))?;
                let inc = self.call(open, "_+_", vec![a, one])?;
                let a = accu(self)?;
                let step = self.call(open, "_?_:_", vec![body, inc, a])?;
                let a = accu(self)?;
                let one = self.mk(open, ExprKind::Literal(Literal::Int(1)))?;
                let result = self.call(open, "_==_", vec![a, one])?;
                (init, cond, step, result)
            }
        })
    }

    fn list_of(&mut self, open: usize, elements: Vec<Expr>) -> PResult<Expr> {
        self.mk(
            open,
            ExprKind::List {
                elements,
                optional_indices: vec![],
            },
        )
    }

    /// The step of the list-building macros: `accu + [value]`, under `filter` if any.
    fn append_step(&mut self, open: usize, value: Expr, filter: Option<Expr>) -> PResult<Expr> {
        let a = self.ident(open, ACCU_VAR)?;
        let single = self.list_of(open, vec![value])?;
        let add = self.call(open, "_+_", vec![a, single])?;
        self.filtered_step(open, add, filter)
    }

    /// `filter ? step : accu`, or `step` without a filter.
    fn filtered_step(&mut self, open: usize, step: Expr, filter: Option<Expr>) -> PResult<Expr> {
        match filter {
            Some(f) => {
                let a = self.ident(open, ACCU_VAR)?;
                self.call(open, "_?_:_", vec![f, step, a])
            }
            None => Ok(step),
        }
    }

    fn single_var_macro(
        &mut self,
        open: usize,
        target: Expr,
        name: &str,
        mut args: Vec<Expr>,
    ) -> PResult<Expr> {
        let var = self.simple_name(&args[0])?;
        if var == ACCU_VAR {
            let off = self.info.position(args[0].id).unwrap_or(open);
            return self.error(
                off,
                "iteration variable overwrites accumulator variable".into(),
            );
        }
        let body = args.pop().ok_or(Fail)?;
        let accu = |p: &mut Self| p.ident(open, ACCU_VAR);
        let (init, cond, step, result) = match name {
            "all" | "exists" | "exists_one" | "existsOne" => self.quantifier(open, name, body)?,
            "map" | "filter" => {
                let init = self.list_of(open, vec![])?;
                let cond = self.lit_bool(open, true)?;
                let (filter, value) = if name == "filter" {
                    let v = self.ident(open, &var)?;
                    (Some(body), v)
                } else if args.len() == 2 {
                    let f = args.pop().ok_or(Fail)?;
                    (Some(f), body)
                } else {
                    (None, body)
                };
                let step = self.append_step(open, value, filter)?;
                (init, cond, step, accu(self)?)
            }
            _ => return self.error(open, format!("unknown macro {name}")),
        };
        self.comprehension(open, &var, None, target, ACCU_VAR, init, cond, step, result)
    }

    /// The two-variable comprehension macros (cel-go `ext.TwoVarComprehensions`).
    fn two_var_macro(
        &mut self,
        open: usize,
        target: Expr,
        name: &str,
        mut args: Vec<Expr>,
    ) -> PResult<Expr> {
        let v1 = self.simple_name(&args[0])?;
        let v2 = self.simple_name(&args[1])?;
        if v1 == ACCU_VAR || v2 == ACCU_VAR {
            return self.error(
                open,
                "iteration variable overwrites accumulator variable".into(),
            );
        }
        if v1 == v2 {
            let off = self.info.position(args[1].id).unwrap_or(open);
            return self.error(off, format!("duplicate variable name: {v1}"));
        }
        let body = args.pop().ok_or(Fail)?;
        let filter = if args.len() == 3 { args.pop() } else { None };
        let accu = |p: &mut Self| p.ident(open, ACCU_VAR);
        let (init, cond, step, result) = match name {
            "all" | "exists" | "exists_one" | "existsOne" => self.quantifier(open, name, body)?,
            "transformList" => {
                let init = self.list_of(open, vec![])?;
                let cond = self.lit_bool(open, true)?;
                let step = self.append_step(open, body, filter)?;
                (init, cond, step, accu(self)?)
            }
            "transformMap" | "transformMapEntry" => {
                let init = self.mk(open, ExprKind::Map { entries: vec![] })?;
                let cond = self.lit_bool(open, true)?;
                let a = accu(self)?;
                let add = if name == "transformMap" {
                    let k = self.ident(open, &v1)?;
                    self.call(open, "cel.@mapInsert", vec![a, k, body])?
                } else {
                    self.call(open, "cel.@mapInsert", vec![a, body])?
                };
                let step = self.filtered_step(open, add, filter)?;
                (init, cond, step, accu(self)?)
            }
            _ => return self.error(open, format!("unknown macro {name}")),
        };
        self.comprehension(
            open,
            &v1,
            Some(v2),
            target,
            ACCU_VAR,
            init,
            cond,
            step,
            result,
        )
    }
}
