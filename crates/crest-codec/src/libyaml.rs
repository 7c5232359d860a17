//! The events of libyaml's parser (the parser serde_yaml_ng uses, and goyaml.v2 ports), with
//! where each starts and the anchors they define or name. The crate's one use of `unsafe`:
//! libyaml's C-style API.
//!
//! The parser streams: a caller that stops reading events stops the parse there, which is what
//! lets [`crate::yaml`] refuse a document before libyaml has done all of its work.

#![allow(unsafe_code)]

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use unsafe_libyaml as unsafe_sys;

pub(crate) enum Event {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias {
        anchor: String,
    },
    Scalar {
        /// Empty unless the parser was made to read values.
        value: String,
        /// Plain style with an implicit tag (the only scalars YAML resolves).
        plain: bool,
        tag: Option<String>,
        anchor: Option<String>,
    },
    SequenceStart {
        anchor: Option<String>,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
    },
    MappingEnd,
}

/// Where an event starts, 0-based (serde_yaml_ng prints both 1-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Mark {
    pub(crate) line: u64,
    pub(crate) column: u64,
}

pub(crate) struct Parser<'input> {
    sys: Box<MaybeUninit<unsafe_sys::yaml_parser_t>>,
    failed: bool,
    values: bool,
    _input: PhantomData<&'input [u8]>,
}

/// A NUL-terminated libyaml string, copied; `None` for a null pointer.
///
/// SAFETY (caller): `p` is null or points to a NUL-terminated string valid for the call.
unsafe fn c_string(p: *const u8) -> Option<String> {
    if p.is_null() {
        return None;
    }
    Some(
        std::ffi::CStr::from_ptr(p as *const std::ffi::c_char)
            .to_string_lossy()
            .into_owned(),
    )
}

impl<'input> Parser<'input> {
    /// A parser of `input`; `values`: whether scalar events carry their values (checks that only
    /// look at the document's shape skip copying them).
    pub(crate) fn new(input: &'input [u8], values: bool) -> Option<Parser<'input>> {
        let mut sys = Box::new(MaybeUninit::<unsafe_sys::yaml_parser_t>::uninit());
        // SAFETY: the parser is initialized before any other use and freed in `drop` only
        // after a successful initialization; the input outlives it ('input) and is never
        // written through.
        unsafe {
            let parser = sys.as_mut_ptr();
            if unsafe_sys::yaml_parser_initialize(parser).fail {
                return None;
            }
            unsafe_sys::yaml_parser_set_encoding(parser, unsafe_sys::YAML_UTF8_ENCODING);
            unsafe_sys::yaml_parser_set_input_string(parser, input.as_ptr(), input.len() as u64);
        }
        Some(Parser {
            sys,
            failed: false,
            values,
            _input: PhantomData,
        })
    }

    /// The next event and where it starts; `None` on a syntax error.
    pub(crate) fn next(&mut self) -> Option<(Event, Mark)> {
        if self.failed {
            return None;
        }
        let mut event = MaybeUninit::<unsafe_sys::yaml_event_t>::uninit();
        // SAFETY: the parser is initialized (see `new`); a successfully parsed event is read,
        // then freed exactly once. Scalar values, anchors and tags are valid for the event's
        // lifetime and copied out before it is deleted; the union field read is the one the
        // event's type selects.
        unsafe {
            let parser = self.sys.as_mut_ptr();
            let ev = event.as_mut_ptr();
            if unsafe_sys::yaml_parser_parse(parser, ev).fail {
                self.failed = true;
                return None;
            }
            let mark = Mark {
                line: (*ev).start_mark.line,
                column: (*ev).start_mark.column,
            };
            let out = match (*ev).type_ {
                unsafe_sys::YAML_STREAM_START_EVENT => Some(Event::StreamStart),
                unsafe_sys::YAML_STREAM_END_EVENT => Some(Event::StreamEnd),
                unsafe_sys::YAML_DOCUMENT_START_EVENT => Some(Event::DocumentStart),
                unsafe_sys::YAML_DOCUMENT_END_EVENT => Some(Event::DocumentEnd),
                unsafe_sys::YAML_ALIAS_EVENT => Some(Event::Alias {
                    anchor: c_string((*ev).data.alias.anchor).unwrap_or_default(),
                }),
                unsafe_sys::YAML_SCALAR_EVENT => {
                    let s = &(*ev).data.scalar;
                    let value = if s.value.is_null() || !self.values {
                        String::new()
                    } else {
                        let bytes = std::slice::from_raw_parts(s.value, s.length as usize);
                        String::from_utf8_lossy(bytes).into_owned()
                    };
                    Some(Event::Scalar {
                        value,
                        plain: s.plain_implicit && s.style == unsafe_sys::YAML_PLAIN_SCALAR_STYLE,
                        tag: c_string(s.tag),
                        anchor: c_string(s.anchor),
                    })
                }
                unsafe_sys::YAML_SEQUENCE_START_EVENT => Some(Event::SequenceStart {
                    anchor: c_string((*ev).data.sequence_start.anchor),
                }),
                unsafe_sys::YAML_SEQUENCE_END_EVENT => Some(Event::SequenceEnd),
                unsafe_sys::YAML_MAPPING_START_EVENT => Some(Event::MappingStart {
                    anchor: c_string((*ev).data.mapping_start.anchor),
                }),
                unsafe_sys::YAML_MAPPING_END_EVENT => Some(Event::MappingEnd),
                _ => None,
            };
            unsafe_sys::yaml_event_delete(ev);
            if out.is_none() {
                self.failed = true;
            }
            out.map(|e| (e, mark))
        }
    }
}

impl Drop for Parser<'_> {
    fn drop(&mut self) {
        // SAFETY: a `Parser` exists only after a successful `yaml_parser_initialize`.
        unsafe { unsafe_sys::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}
