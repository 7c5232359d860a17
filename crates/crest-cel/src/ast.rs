//! The parsed expression tree, shaped like cel-go's `ast.Expr` after macro expansion: constants,
//! identifiers, selections, calls, list/map/struct literals and comprehensions. Every node has an
//! id, and `SourceInfo` maps ids to code-point offsets in the source (what error locations use).

use std::collections::HashMap;
use std::sync::Arc;

/// Expression id, unique within one parsed expression (cel-go starts at 1).
pub type ExprId = i64;

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub id: ExprId,
    pub kind: ExprKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A (possibly qualified, with a leading `.`) name.
    Ident(String),
    /// `operand.field`; `test_only` for `has(operand.field)`.
    Select {
        operand: Box<Expr>,
        field: String,
        test_only: bool,
    },
    /// Global `f(args)` or receiver `target.f(args)`. Operators are calls (`_+_`, `_[_]`, ...).
    Call {
        target: Option<Box<Expr>>,
        function: String,
        args: Vec<Expr>,
    },
    List {
        elements: Vec<Expr>,
        /// Indices of `?elem` entries (optional syntax).
        optional_indices: Vec<usize>,
    },
    Map {
        entries: Vec<MapEntry>,
    },
    /// `Type{field: value}` message construction.
    Struct {
        type_name: String,
        fields: Vec<StructField>,
    },
    Comprehension(Box<Comprehension>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapEntry {
    pub id: ExprId,
    pub key: Expr,
    pub value: Expr,
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct StructField {
    pub id: ExprId,
    pub name: String,
    pub value: Expr,
    pub optional: bool,
}

/// The fold every macro expands to. With `iter_var2` set (two-variable comprehensions) the first
/// variable is the list index or map key and the second the element or map value.
#[derive(Debug, Clone, PartialEq)]
pub struct Comprehension {
    pub iter_var: String,
    pub iter_var2: Option<String>,
    pub iter_range: Expr,
    pub accu_var: String,
    pub accu_init: Expr,
    pub loop_condition: Expr,
    pub loop_step: Expr,
    pub result: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Arc<str>),
    Bytes(Arc<[u8]>),
}

/// Source text and the position of every node, for error messages.
#[derive(Debug, Clone, Default)]
pub struct SourceInfo {
    /// The expression's text, as code points (cel-go counts columns in code points).
    chars: Vec<char>,
    /// Code-point offset at which each line starts (line 1 at index 0).
    line_starts: Vec<usize>,
    positions: HashMap<ExprId, usize>,
}

impl SourceInfo {
    pub fn new(text: &str) -> SourceInfo {
        let chars: Vec<char> = text.chars().collect();
        let mut line_starts = vec![0];
        for (i, c) in chars.iter().enumerate() {
            if *c == '\n' {
                line_starts.push(i + 1);
            }
        }
        SourceInfo {
            chars,
            line_starts,
            positions: HashMap::new(),
        }
    }

    pub fn set_position(&mut self, id: ExprId, offset: usize) {
        self.positions.insert(id, offset);
    }

    /// Code-point offset of a node, if it has one.
    pub fn position(&self, id: ExprId) -> Option<usize> {
        self.positions.get(&id).copied()
    }

    /// 1-based line and 0-based column (code points) of an offset.
    pub fn location(&self, offset: usize) -> (usize, usize) {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (line + 1, offset - self.line_starts[line])
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: usize) -> Option<String> {
        let start = *self.line_starts.get(line.checked_sub(1)?)?;
        let end = self
            .line_starts
            .get(line)
            .map(|s| s - 1)
            .unwrap_or(self.chars.len());
        Some(self.chars[start..end].iter().collect())
    }
}

/// A parsed (and, once checked, type-annotated) expression.
#[derive(Debug, Clone)]
pub struct Ast {
    pub expr: Expr,
    pub source: Arc<SourceInfo>,
    /// The id after the highest id in the tree (checker-created nodes use fresh ids from here).
    pub next_id: ExprId,
}

impl Expr {
    /// Direct children, in evaluation order.
    pub fn children(&self) -> Vec<&Expr> {
        match &self.kind {
            ExprKind::Literal(_) | ExprKind::Ident(_) => vec![],
            ExprKind::Select { operand, .. } => vec![operand],
            ExprKind::Call { target, args, .. } => {
                let mut v: Vec<&Expr> = target.iter().map(|t| &**t).collect();
                v.extend(args.iter());
                v
            }
            ExprKind::List { elements, .. } => elements.iter().collect(),
            ExprKind::Map { entries } => entries.iter().flat_map(|e| [&e.key, &e.value]).collect(),
            ExprKind::Struct { fields, .. } => fields.iter().map(|f| &f.value).collect(),
            ExprKind::Comprehension(c) => vec![
                &c.iter_range,
                &c.accu_init,
                &c.loop_condition,
                &c.loop_step,
                &c.result,
            ],
        }
    }

    /// If this is a chain of identifiers and selections (`a.b.c`), its dotted name.
    pub fn qualified_name(&self) -> Option<String> {
        match &self.kind {
            ExprKind::Ident(n) => Some(n.clone()),
            ExprKind::Select {
                operand,
                field,
                test_only: false,
            } => operand.qualified_name().map(|p| format!("{p}.{field}")),
            _ => None,
        }
    }
}
