//! A uniform view of schema nodes for validation: structural nodes and the nested value
//! validations under junctors are validated the same way (kube-openapi sees both as schemas).

use crate::structural::{Extensions, Generic, NestedValueValidation, Structural, ValueValidation};

#[derive(Clone, Copy)]
pub(crate) enum Node<'a> {
    S(&'a Structural),
    N(&'a NestedValueValidation),
}

/// The `type` list kube-openapi validates against.
#[derive(Clone, Copy)]
pub(crate) enum Types<'a> {
    None,
    One(&'a str),
    /// `x-kubernetes-int-or-string`: `["integer", "string"]`.
    IntOrString,
}

impl<'a> Types<'a> {
    pub(super) fn is_empty(self) -> bool {
        matches!(self, Types::None)
    }

    pub(super) fn contains(self, t: &str) -> bool {
        match self {
            Types::None => false,
            Types::One(x) => x == t,
            Types::IntOrString => t == "integer" || t == "string",
        }
    }

    /// The list as kube-openapi joins it in messages.
    pub(super) fn joined(self) -> &'a str {
        match self {
            Types::None => "",
            Types::IntOrString => "integer,string",
            Types::One(x) => x,
        }
    }
}

impl<'a> Node<'a> {
    pub(super) fn generic(self) -> &'a Generic {
        match self {
            Node::S(s) => &s.generic,
            Node::N(n) => &n.forbidden_generics,
        }
    }

    pub(super) fn ext(self) -> &'a Extensions {
        match self {
            Node::S(s) => &s.extensions,
            Node::N(n) => &n.forbidden_extensions,
        }
    }

    pub(super) fn vv(self) -> Option<&'a ValueValidation> {
        match self {
            Node::S(s) => s.value_validation.as_deref(),
            Node::N(n) => Some(&n.value_validation),
        }
    }

    pub(super) fn types(self) -> Types<'a> {
        if self.ext().x_int_or_string {
            Types::IntOrString
        } else {
            let t = self.generic().type_.as_str();
            if t.is_empty() {
                Types::None
            } else {
                Types::One(t)
            }
        }
    }

    pub(super) fn items(self) -> Option<Node<'a>> {
        match self {
            Node::S(s) => s.items.as_deref().map(Node::S),
            Node::N(n) => n.items.as_deref().map(Node::N),
        }
    }

    pub(super) fn has_property(self, k: &str) -> bool {
        match self {
            Node::S(s) => s.properties.contains_key(k),
            Node::N(n) => n.properties.contains_key(k),
        }
    }

    /// Calls `f` for every declared property.
    pub(super) fn for_each_property(self, mut f: impl FnMut(&'a str, Node<'a>)) {
        match self {
            Node::S(s) => s.properties.iter().for_each(|(k, v)| f(k, Node::S(v))),
            Node::N(n) => n.properties.iter().for_each(|(k, v)| f(k, Node::N(v))),
        }
    }

    /// `additionalProperties`: whether other keys are allowed, and their schema.
    pub(super) fn additional(self) -> Option<(bool, Option<Node<'a>>)> {
        self.generic()
            .additional_properties
            .as_ref()
            .map(|a| (a.bool, a.structural.as_deref().map(Node::S)))
    }

    pub(super) fn structural(self) -> Option<&'a Structural> {
        match self {
            Node::S(s) => Some(s),
            Node::N(_) => None,
        }
    }
}
