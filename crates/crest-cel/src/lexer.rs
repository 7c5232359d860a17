//! Tokens of CEL's grammar (cel-spec `CEL.g4`). Offsets are code-point offsets.

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Ident(String),
    /// Backtick-quoted field name (`` a.`b-c` ``).
    EscIdent(String),
    Int(String),
    Uint(String),
    Float(String),
    Str(String),
    Bytes(Vec<u8>),
    True,
    False,
    Null,
    In,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Dot,
    Comma,
    Colon,
    Question,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    EqEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    /// `=`, which the grammar knows only to report it.
    Assign,
    Eof,
}

#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub tok: Tok,
    pub start: usize,
    /// The token's source text (error messages quote it).
    pub text: String,
}

pub(crate) struct LexError {
    pub offset: usize,
    pub message: String,
}

/// Splits the whole input into tokens; unrecognized characters become errors (as ANTLR's lexer
/// reports them) and are skipped.
pub(crate) fn tokenize(src: &[char]) -> (Vec<Token>, Vec<LexError>) {
    let mut lx = Lexer {
        s: src,
        i: 0,
        toks: Vec::new(),
        errs: Vec::new(),
    };
    lx.run();
    (lx.toks, lx.errs)
}

struct Lexer<'a> {
    s: &'a [char],
    i: usize,
    toks: Vec<Token>,
    errs: Vec<LexError>,
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<char> {
        self.s.get(self.i + k).copied()
    }

    fn text(&self, start: usize) -> String {
        self.s[start..self.i].iter().collect()
    }

    fn push(&mut self, tok: Tok, start: usize) {
        let text = self.text(start);
        self.toks.push(Token { tok, start, text });
    }

    fn run(&mut self) {
        while let Some(c) = self.peek(0) {
            let start = self.i;
            match c {
                ' ' | '\t' | '\r' | '\n' | '\u{c}' => self.i += 1,
                '/' if self.peek(1) == Some('/') => {
                    while let Some(c) = self.peek(0) {
                        if c == '\n' {
                            break;
                        }
                        self.i += 1;
                    }
                }
                '0'..='9' => self.number(),
                '.' if matches!(self.peek(1), Some('0'..='9')) => self.number(),
                '"' | '\'' => self.string(start, false, false),
                'r' | 'R' | 'b' | 'B' if self.string_prefix() => {}
                c if c == '_' || c.is_ascii_alphabetic() => {
                    while matches!(self.peek(0), Some(c) if c == '_' || c.is_ascii_alphanumeric()) {
                        self.i += 1;
                    }
                    let word = self.text(start);
                    let tok = match word.as_str() {
                        "true" => Tok::True,
                        "false" => Tok::False,
                        "null" => Tok::Null,
                        "in" => Tok::In,
                        _ => Tok::Ident(word),
                    };
                    self.push(tok, start);
                }
                '`' => self.esc_ident(start),
                _ => {
                    let two: Option<Tok> = match (c, self.peek(1)) {
                        ('=', Some('=')) => Some(Tok::EqEq),
                        ('!', Some('=')) => Some(Tok::Ne),
                        ('<', Some('=')) => Some(Tok::Le),
                        ('>', Some('=')) => Some(Tok::Ge),
                        ('&', Some('&')) => Some(Tok::And),
                        ('|', Some('|')) => Some(Tok::Or),
                        _ => None,
                    };
                    if let Some(t) = two {
                        self.i += 2;
                        self.push(t, start);
                        continue;
                    }
                    let one = match c {
                        '(' => Tok::LParen,
                        ')' => Tok::RParen,
                        '[' => Tok::LBracket,
                        ']' => Tok::RBracket,
                        '{' => Tok::LBrace,
                        '}' => Tok::RBrace,
                        '.' => Tok::Dot,
                        ',' => Tok::Comma,
                        ':' => Tok::Colon,
                        '?' => Tok::Question,
                        '+' => Tok::Plus,
                        '-' => Tok::Minus,
                        '*' => Tok::Star,
                        '/' => Tok::Slash,
                        '%' => Tok::Percent,
                        '!' => Tok::Bang,
                        '<' => Tok::Lt,
                        '>' => Tok::Gt,
                        '=' => Tok::Assign,
                        _ => {
                            self.i += 1;
                            self.errs.push(LexError {
                                offset: start,
                                message: format!("Syntax error: token recognition error at: '{c}'"),
                            });
                            continue;
                        }
                    };
                    self.i += 1;
                    self.push(one, start);
                }
            }
        }
        self.toks.push(Token {
            tok: Tok::Eof,
            start: self.s.len(),
            text: "<EOF>".to_string(),
        });
    }

    /// At `r`, `b`, `rb`, `br` (any case) directly followed by a quote: lex a string or bytes
    /// literal and return true; otherwise leave the input alone.
    fn string_prefix(&mut self) -> bool {
        let start = self.i;
        let (mut raw, mut bytes) = (false, false);
        let mut k = 0;
        while k < 2 {
            match self.peek(k) {
                Some('r' | 'R') if !raw => raw = true,
                Some('b' | 'B') if !bytes => bytes = true,
                _ => break,
            }
            k += 1;
        }
        if !matches!(self.peek(k), Some('"' | '\'')) {
            return false;
        }
        self.i += k;
        self.string(start, raw, bytes);
        true
    }

    fn number(&mut self) {
        let start = self.i;
        let digits = |lx: &mut Self| {
            let mut n = 0;
            while matches!(lx.peek(0), Some('0'..='9')) {
                lx.i += 1;
                n += 1;
            }
            n
        };
        if self.peek(0) == Some('0')
            && matches!(self.peek(1), Some('x' | 'X'))
            && matches!(self.peek(2), Some(c) if c.is_ascii_hexdigit())
        {
            self.i += 2;
            while matches!(self.peek(0), Some(c) if c.is_ascii_hexdigit()) {
                self.i += 1;
            }
            return self.int_suffix(start);
        }
        let mut float = false;
        if self.peek(0) != Some('.') {
            digits(self);
        }
        if self.peek(0) == Some('.') && matches!(self.peek(1), Some('0'..='9')) {
            self.i += 1;
            digits(self);
            float = true;
        }
        if matches!(self.peek(0), Some('e' | 'E')) {
            let save = self.i;
            self.i += 1;
            if matches!(self.peek(0), Some('+' | '-')) {
                self.i += 1;
            }
            if digits(self) > 0 {
                float = true;
            } else {
                self.i = save;
            }
        }
        if float {
            let t = self.text(start);
            self.push(Tok::Float(t), start);
        } else {
            self.int_suffix(start);
        }
    }

    fn int_suffix(&mut self, start: usize) {
        let t = self.text(start);
        if matches!(self.peek(0), Some('u' | 'U')) {
            self.i += 1;
            self.push(Tok::Uint(t), start);
        } else {
            self.push(Tok::Int(t), start);
        }
    }

    fn esc_ident(&mut self, start: usize) {
        self.i += 1;
        let body_start = self.i;
        while let Some(c) = self.peek(0) {
            if c == '`' {
                let body = self.text(body_start);
                self.i += 1;
                // The grammar allows letters, digits and `_.-/ ` inside backticks.
                if !body.is_empty()
                    && body
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-/ ".contains(c))
                {
                    self.push(Tok::EscIdent(body), start);
                } else {
                    self.errs.push(LexError {
                        offset: start,
                        message: format!(
                            "Syntax error: token recognition error at: '{}'",
                            self.text(start)
                        ),
                    });
                }
                return;
            }
            if c == '\n' {
                break;
            }
            self.i += 1;
        }
        self.i = start + 1;
        self.errs.push(LexError {
            offset: start,
            message: "Syntax error: token recognition error at: '`'".to_string(),
        });
    }

    /// Lexes a quoted literal whose prefix (if any) has been consumed; the quote is at `self.i`.
    fn string(&mut self, start: usize, raw: bool, bytes: bool) {
        let q = self.s[self.i];
        let triple = self.peek(1) == Some(q) && self.peek(2) == Some(q);
        self.i += if triple { 3 } else { 1 };
        let mut out: Vec<u8> = Vec::new();
        let mut chars = String::new();
        let push_char = |c: char, out: &mut Vec<u8>, chars: &mut String| {
            if bytes {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            } else {
                chars.push(c);
            }
        };
        loop {
            let Some(c) = self.peek(0) else {
                return self.unterminated(start);
            };
            if c == q && (!triple || (self.peek(1) == Some(q) && self.peek(2) == Some(q))) {
                self.i += if triple { 3 } else { 1 };
                break;
            }
            if !triple && (c == '\n' || c == '\r') {
                return self.unterminated(start);
            }
            if c == '\\' && !raw {
                match self.escape(bytes) {
                    Some(Esc::Char(c)) => push_char(c, &mut out, &mut chars),
                    Some(Esc::Byte(b)) => {
                        if bytes {
                            out.push(b)
                        } else {
                            chars.push(b as char)
                        }
                    }
                    None => return self.unterminated(start),
                }
                continue;
            }
            if c == '\\' && raw && self.peek(1).is_some() {
                // In raw strings a backslash still keeps a following quote from ending it.
                push_char(c, &mut out, &mut chars);
                self.i += 1;
                let n = self.s[self.i];
                push_char(n, &mut out, &mut chars);
                self.i += 1;
                continue;
            }
            push_char(c, &mut out, &mut chars);
            self.i += 1;
        }
        if bytes {
            self.push(Tok::Bytes(out), start);
        } else {
            self.push(Tok::Str(chars), start);
        }
    }

    fn unterminated(&mut self, start: usize) {
        // ANTLR reports the unmatched text from the literal's start; skip just the first
        // character so lexing continues, as its lexer does.
        let end = self.i.min(self.s.len());
        let text: String = self.s[start..end].iter().collect();
        self.errs.push(LexError {
            offset: start,
            message: format!("Syntax error: token recognition error at: '{text}'"),
        });
        self.i = start + 1;
    }

    /// Decodes the escape at `self.i` (a backslash); None when it is not a valid escape.
    fn escape(&mut self, bytes: bool) -> Option<Esc> {
        let c = self.peek(1)?;
        self.i += 2;
        let simple = match c {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' => Some('\\'),
            '\'' => Some('\''),
            '"' => Some('"'),
            '`' => Some('`'),
            '?' => Some('?'),
            _ => None,
        };
        if let Some(s) = simple {
            return Some(Esc::Char(s));
        }
        let hex = |lx: &mut Self, n: usize| -> Option<u32> {
            let mut v: u32 = 0;
            for _ in 0..n {
                let d = lx.peek(0)?.to_digit(16)?;
                v = v * 16 + d;
                lx.i += 1;
            }
            Some(v)
        };
        match c {
            'x' | 'X' => {
                let v = hex(self, 2)?;
                Some(Esc::Byte(v as u8))
            }
            'u' => char::from_u32(hex(self, 4)?).map(Esc::Char),
            'U' => char::from_u32(hex(self, 8)?).map(Esc::Char),
            '0'..='3' => {
                let mut v = c.to_digit(8)?;
                for _ in 0..2 {
                    v = v * 8 + self.peek(0)?.to_digit(8)?;
                    self.i += 1;
                }
                if bytes {
                    Some(Esc::Byte(v as u8))
                } else {
                    char::from_u32(v).map(Esc::Char)
                }
            }
            _ => None,
        }
    }
}

enum Esc {
    Char(char),
    /// `\xHH` / octal: a byte in bytes literals, the code point U+00HH in strings.
    Byte(u8),
}
