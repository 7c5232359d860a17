//! Go's `%#v` rendering of the few composite values kube-apiserver puts into CRD validation
//! messages (`Invalid value: []string{"v1"}: ...`). Pointers print as addresses in Go; those are
//! meaningless to clients, so a fixed address stands in for non-nil ones.

use crate::types::{CustomResourceColumnDefinition, SelectableField};

/// Go's `strconv.Quote`, shared with the schema crate's messages.
pub(crate) use crest_gofmt::go_quote as quote;

/// `%#v` of a `[]string`; `None` is a nil slice.
pub(crate) fn string_slice(items: Option<&[String]>) -> String {
    match items {
        None => "[]string(nil)".to_string(),
        Some(items) => format!(
            "[]string{{{}}}",
            items
                .iter()
                .map(|s| quote(s))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A stand-in for a non-nil pointer (Go prints the heap address).
fn pointer(go_type: &str, set: bool) -> String {
    if set {
        format!("(*{go_type})(0xc000a1e000)")
    } else {
        format!("(*{go_type})(nil)")
    }
}

/// What `%#v` needs of one internal `apiextensions.CustomResourceDefinitionVersion`.
pub(crate) struct GoVersion<'a> {
    pub name: &'a str,
    pub served: bool,
    pub storage: bool,
    pub deprecated: bool,
    pub deprecation_warning: bool,
    pub schema: bool,
    pub subresources: bool,
    /// `None` is a nil slice.
    pub columns: Option<&'a [CustomResourceColumnDefinition]>,
    pub selectable_fields: Option<&'a [SelectableField]>,
}

fn columns(cols: Option<&[CustomResourceColumnDefinition]>) -> String {
    const T: &str = "apiextensions.CustomResourceColumnDefinition";
    match cols {
        None => format!("[]{T}(nil)"),
        Some(cols) => {
            let items: Vec<String> = cols
                .iter()
                .map(|c| {
                    format!(
                        "{T}{{Name:{}, Type:{}, Format:{}, Description:{}, Priority:{}, JSONPath:{}}}",
                        quote(&c.name),
                        quote(&c.type_),
                        quote(&c.format),
                        quote(&c.description),
                        c.priority,
                        quote(&c.json_path)
                    )
                })
                .collect();
            format!("[]{T}{{{}}}", items.join(", "))
        }
    }
}

fn selectable(fields: Option<&[SelectableField]>) -> String {
    const T: &str = "apiextensions.SelectableField";
    match fields {
        None => format!("[]{T}(nil)"),
        Some(fields) => {
            let items: Vec<String> = fields
                .iter()
                .map(|f| format!("{T}{{JSONPath:{}}}", quote(&f.json_path)))
                .collect();
            format!("[]{T}{{{}}}", items.join(", "))
        }
    }
}

/// `%#v` of `[]apiextensions.CustomResourceDefinitionVersion` (`spec.versions` errors).
pub(crate) fn versions(versions: Option<&[GoVersion<'_>]>) -> String {
    const T: &str = "apiextensions.CustomResourceDefinitionVersion";
    let Some(versions) = versions else {
        return format!("[]{T}(nil)");
    };
    let items: Vec<String> = versions
        .iter()
        .map(|v| {
            format!(
                "{T}{{Name:{}, Served:{}, Storage:{}, Deprecated:{}, DeprecationWarning:{}, Schema:{}, Subresources:{}, AdditionalPrinterColumns:{}, SelectableFields:{}}}",
                quote(v.name),
                v.served,
                v.storage,
                v.deprecated,
                pointer("string", v.deprecation_warning),
                pointer("apiextensions.CustomResourceValidation", v.schema),
                pointer("apiextensions.CustomResourceSubresources", v.subresources),
                columns(v.columns),
                selectable(v.selectable_fields),
            )
        })
        .collect();
    format!("[]{T}{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_go() {
        assert_eq!(quote("a\"b\\\n\u{1}é"), "\"a\\\"b\\\\\\n\\x01é\"");
        assert_eq!(string_slice(None), "[]string(nil)");
        assert_eq!(string_slice(Some(&[])), "[]string{}");
        assert_eq!(
            string_slice(Some(&["v1".into(), "v2".into()])),
            "[]string{\"v1\", \"v2\"}"
        );
        let cols = [CustomResourceColumnDefinition {
            name: "A".into(),
            type_: "string".into(),
            json_path: ".a".into(),
            ..Default::default()
        }];
        let v = GoVersion {
            name: "v1",
            served: true,
            storage: false,
            deprecated: false,
            deprecation_warning: false,
            schema: true,
            subresources: false,
            columns: Some(&cols),
            selectable_fields: None,
        };
        assert_eq!(
            versions(Some(&[v])),
            "[]apiextensions.CustomResourceDefinitionVersion{apiextensions.CustomResourceDefinitionVersion{Name:\"v1\", Served:true, Storage:false, Deprecated:false, DeprecationWarning:(*string)(nil), Schema:(*apiextensions.CustomResourceValidation)(0xc000a1e000), Subresources:(*apiextensions.CustomResourceSubresources)(nil), AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition{apiextensions.CustomResourceColumnDefinition{Name:\"A\", Type:\"string\", Format:\"\", Description:\"\", Priority:0, JSONPath:\".a\"}}, SelectableFields:[]apiextensions.SelectableField(nil)}}"
        );
        assert_eq!(
            versions(None),
            "[]apiextensions.CustomResourceDefinitionVersion(nil)"
        );
    }
}
