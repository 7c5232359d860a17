//! The vocabulary of static cost estimation that function declarations use: cost and size
//! ranges and a call's operands (re-exported from [`crate::cost`]).

use crate::ast::Literal;
use crate::types::Type;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CostEstimate {
    pub min: u64,
    pub max: u64,
}

impl CostEstimate {
    pub const ZERO: CostEstimate = CostEstimate { min: 0, max: 0 };

    pub fn fixed(c: u64) -> CostEstimate {
        CostEstimate { min: c, max: c }
    }

    pub fn plus(self, o: CostEstimate) -> CostEstimate {
        CostEstimate {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    pub fn multiply(self, by: SizeEstimate) -> CostEstimate {
        CostEstimate {
            min: self.min.saturating_mul(by.min),
            max: self.max.saturating_mul(by.max),
        }
    }

    /// The cheaper minimum and the dearer maximum (for branches).
    pub fn union(self, o: CostEstimate) -> CostEstimate {
        CostEstimate {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeEstimate {
    pub min: u64,
    pub max: u64,
}

impl SizeEstimate {
    pub const UNKNOWN: SizeEstimate = SizeEstimate {
        min: 0,
        max: u64::MAX,
    };

    pub fn exact(n: u64) -> SizeEstimate {
        SizeEstimate { min: n, max: n }
    }
}

/// One operand of a call as [`crate::cost::CostEstimator::estimate_call_args`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallArg<'a> {
    pub size: SizeEstimate,
    /// The size of its elements (its path extended with `@items`; unknown without a path).
    pub elem_size: SizeEstimate,
    pub ty: &'a Type,
    pub literal: Option<&'a Literal>,
}
