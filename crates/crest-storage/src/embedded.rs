//! The embedded backend (placeholder until implemented).
use crate::*;

#[derive(Clone, Debug, Default)]
pub struct EmbeddedOptions {}

pub struct EmbeddedStore {}
