//! Kubernetes' format library (apiserver `library/format.go`, 1.31+): named string formats
//! (`format.dns1123Label()`, `format.named('uuid')`, ...) whose `validate(s)` is
//! `optional.none()` for a valid string, else the list of Kubernetes' validation messages.

use std::sync::Arc;

use crest_api::validation as v;
use crest_cel::decls::{Library, Overload};
use crest_cel::eval::EvalError;
use crest_cel::types::Type;
use crest_cel::value::{OpaqueValue, Value};
use crest_schema::validation::formats::{validates, Format as SchemaFormat};

pub const TYPE_NAME: &str = "kubernetes.Format";

/// A named format: its validation and the regex size upstream's runtime cost assumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamedFormat {
    pub name: &'static str,
    pub max_regex_size: u64,
}

const UUID_PATTERN: &str =
    "(?i)(^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)|(^[0-9a-f]{32}$)";
const BASE64_PATTERN: &str =
    r"^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$";
const DATE_TIME_PATTERN: &str =
    "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$";
/// govalidator's URL pattern is about this long; upstream only uses it to price `validate`.
const URL_PATTERN_SIZE: u64 = 1140;

/// The names `format.named` knows, with their constructor function suffix.
pub const FORMATS: &[NamedFormat] = &[
    NamedFormat {
        name: "dns1123Label",
        max_regex_size: 30,
    },
    NamedFormat {
        name: "dns1123Subdomain",
        max_regex_size: 60,
    },
    NamedFormat {
        name: "dns1035Label",
        max_regex_size: 30,
    },
    NamedFormat {
        name: "qualifiedName",
        max_regex_size: 60,
    },
    NamedFormat {
        name: "dns1123LabelPrefix",
        max_regex_size: 30,
    },
    NamedFormat {
        name: "dns1123SubdomainPrefix",
        max_regex_size: 60,
    },
    NamedFormat {
        name: "dns1035LabelPrefix",
        max_regex_size: 30,
    },
    NamedFormat {
        name: "labelValue",
        max_regex_size: 40,
    },
    NamedFormat {
        name: "uri",
        max_regex_size: URL_PATTERN_SIZE,
    },
    NamedFormat {
        name: "uuid",
        max_regex_size: UUID_PATTERN.len() as u64,
    },
    NamedFormat {
        name: "byte",
        max_regex_size: BASE64_PATTERN.len() as u64,
    },
    NamedFormat {
        name: "date",
        max_regex_size: DATE_TIME_PATTERN.len() as u64,
    },
    NamedFormat {
        name: "datetime",
        max_regex_size: DATE_TIME_PATTERN.len() as u64,
    },
];

/// apimachinery's `maskTrailingDash`: a prefix may end in a dash.
fn mask_trailing_dash(s: &str) -> String {
    match s.strip_suffix('-') {
        Some(rest) if s.len() > 1 => format!("{rest}a"),
        _ => s.to_string(),
    }
}

fn check(ok: bool, msg: &str) -> Vec<String> {
    if ok {
        vec![]
    } else {
        vec![msg.to_string()]
    }
}

impl NamedFormat {
    pub fn validate(&self, s: &str) -> Vec<String> {
        match self.name {
            "dns1123Label" => v::name_is_dns_label(s, false),
            "dns1123Subdomain" => v::name_is_dns_subdomain(s, false),
            "dns1035Label" => v::is_dns1035_label(s),
            "qualifiedName" => v::is_qualified_name(s),
            "dns1123LabelPrefix" => v::name_is_dns_label(s, true),
            "dns1123SubdomainPrefix" => v::name_is_dns_subdomain(s, true),
            "dns1035LabelPrefix" => v::is_dns1035_label(&mask_trailing_dash(s)),
            "labelValue" => v::is_valid_label_value(s),
            "uri" => match super::urls::parse_request_uri(s) {
                Ok(_) => vec![],
                Err(e) => vec![e],
            },
            "uuid" => check(
                validates(SchemaFormat::Uuid, s),
                "does not match the UUID format",
            ),
            "byte" => check(validates(SchemaFormat::Byte, s), "invalid base64"),
            "date" => check(validates(SchemaFormat::Date, s), "invalid date"),
            _ => check(validates(SchemaFormat::DateTime, s), "invalid datetime"),
        }
    }
}

impl OpaqueValue for NamedFormat {
    fn type_name(&self) -> &str {
        TYPE_NAME
    }
    fn equals(&self, other: &dyn OpaqueValue) -> bool {
        other.as_any().downcast_ref::<NamedFormat>() == Some(self)
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

pub fn ty() -> Type {
    Type::Opaque(TYPE_NAME.into(), vec![])
}

pub fn library() -> Library {
    let mut lib = Library::new("format")
        .function(
            "validate",
            [Overload::member(
                "format-validate",
                vec![ty(), Type::String],
                Type::optional(Type::list(Type::String)),
            )
            .implement(|a| match a {
                [Value::Opaque(o), Value::String(s)] => {
                    let f = o
                        .as_any()
                        .downcast_ref::<NamedFormat>()
                        .ok_or_else(|| EvalError::new("no such overload"))?;
                    let errs = f.validate(s);
                    Ok(Value::Optional(if errs.is_empty() {
                        None
                    } else {
                        Some(Arc::new(Value::list(
                            errs.iter().map(|e| Value::string(e)).collect(),
                        )))
                    }))
                }
                _ => Err(EvalError::new("no such overload")),
            })],
        )
        .function(
            "format.named",
            [
                Overload::global("format-named", vec![Type::String], Type::optional(ty()))
                    .implement(|a| match a {
                        [Value::String(n)] => Ok(Value::Optional(
                            FORMATS
                                .iter()
                                .find(|f| f.name == &**n)
                                .map(|f| Arc::new(Value::Opaque(Arc::new(*f)))),
                        )),
                        _ => Err(EvalError::new("no such overload")),
                    }),
            ],
        );
    for f in FORMATS {
        let name = format!("format.{}", f.name);
        let value = *f;
        lib = lib.function(
            &name,
            [Overload::global(&name, vec![], ty())
                .implement(move |_| Ok(Value::Opaque(Arc::new(value))))],
        );
    }
    lib
}
