//! rbac.authorization.k8s.io/v1 printers (upstream `printRole`, `printClusterRole`,
//! `printRoleBinding`, `printClusterRoleBinding`).

use super::{age, name, string_column, AGE, NAME};
use crate::{Cell, ColumnDef, Printer, CREATION_TIMESTAMP_DESCRIPTION};
use serde_json::Value;
use std::borrow::Cow;

/// `RoleBinding.roleRef`'s documentation (the Role column describes it).
const ROLE_BINDING_ROLE_REF_DESCRIPTION: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";
/// `ClusterRoleBinding.roleRef`'s documentation.
const CLUSTER_ROLE_BINDING_ROLE_REF_DESCRIPTION: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable.";

/// The `Created At` column of Roles and ClusterRoles (type `date`).
const CREATED_AT: ColumnDef = ColumnDef {
    name: "Created At",
    column_type: "date",
    format: "",
    description: CREATION_TIMESTAMP_DESCRIPTION,
    priority: 0,
};

/// Name, Created At (the creationTimestamp in RFC 3339, UTC).
pub static ROLE: Printer = Printer {
    columns: &[NAME, CREATED_AT],
    cells: role_cells,
};

/// ClusterRoles print as Roles do.
pub static CLUSTER_ROLE: Printer = Printer {
    columns: &[NAME, CREATED_AT],
    cells: role_cells,
};

/// Name, Role (`<kind>/<name>` of roleRef), Age, and the wide Users, Groups, ServiceAccounts
/// (the subjects of each kind, `, `-joined; ServiceAccounts as `<namespace>/<name>`).
pub static ROLE_BINDING: Printer = Printer {
    columns: &[
        NAME,
        string_column("Role", ROLE_BINDING_ROLE_REF_DESCRIPTION, 0),
        AGE,
        string_column("Users", "Users in the roleBinding", 1),
        string_column("Groups", "Groups in the roleBinding", 1),
        string_column("ServiceAccounts", "ServiceAccounts in the roleBinding", 1),
    ],
    cells: binding_cells,
};

/// As [`ROLE_BINDING`], described for ClusterRoleBindings.
pub static CLUSTER_ROLE_BINDING: Printer = Printer {
    columns: &[
        NAME,
        string_column("Role", CLUSTER_ROLE_BINDING_ROLE_REF_DESCRIPTION, 0),
        AGE,
        string_column("Users", "Users in the clusterRoleBinding", 1),
        string_column("Groups", "Groups in the clusterRoleBinding", 1),
        string_column(
            "ServiceAccounts",
            "ServiceAccounts in the clusterRoleBinding",
            1,
        ),
    ],
    cells: binding_cells,
};

fn role_cells(obj: &Value, _now_ms: i64) -> Vec<Cell<'_>> {
    vec![name(obj), Cell::Str(Cow::Owned(created_at(obj)))]
}

/// `CreationTimestamp.Time.UTC().Format(time.RFC3339)`: the zero time when unset.
fn created_at(obj: &Value) -> String {
    let ts = crest_api::meta::meta_str(obj, "creationTimestamp");
    match chrono::DateTime::parse_from_rfc3339(ts) {
        Ok(t) => t
            .with_timezone(&chrono::Utc)
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string(),
        Err(_) => "0001-01-01T00:00:00Z".to_string(),
    }
}

fn str_of<'a>(v: &'a Value, field: &str) -> &'a str {
    v.get(field).and_then(Value::as_str).unwrap_or("")
}

fn binding_cells(obj: &Value, now_ms: i64) -> Vec<Cell<'_>> {
    let role_ref = obj.get("roleRef").unwrap_or(&Value::Null);
    let role = format!("{}/{}", str_of(role_ref, "kind"), str_of(role_ref, "name"));
    // rbac.SubjectsStrings.
    let (mut users, mut groups, mut sas) = (vec![], vec![], vec![]);
    for s in obj
        .get("subjects")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        match str_of(s, "kind") {
            "ServiceAccount" => {
                sas.push(format!("{}/{}", str_of(s, "namespace"), str_of(s, "name")))
            }
            "User" => users.push(str_of(s, "name").to_string()),
            "Group" => groups.push(str_of(s, "name").to_string()),
            _ => {}
        }
    }
    vec![
        name(obj),
        Cell::Str(Cow::Owned(role)),
        age(obj, now_ms),
        Cell::Str(Cow::Owned(users.join(", "))),
        Cell::Str(Cow::Owned(groups.join(", "))),
        Cell::Str(Cow::Owned(sas.join(", "))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{column_definitions, row, IncludeObject, TableStyle};
    use serde_json::json;

    #[test]
    fn binding_row_and_columns() {
        let style = TableStyle::Builtin(&ROLE_BINDING);
        let names: Vec<Value> = column_definitions(&style)
            .iter()
            .map(|c| json!([c["name"], c["priority"]]))
            .collect();
        assert_eq!(
            names,
            vec![
                json!(["Name", 0]),
                json!(["Role", 0]),
                json!(["Age", 0]),
                json!(["Users", 1]),
                json!(["Groups", 1]),
                json!(["ServiceAccounts", 1]),
            ]
        );
        let rb = json!({"metadata": {"name": "rb", "creationTimestamp": "2024-05-01T10:00:00Z"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "b", "namespace": "ns"},
                {"kind": "User", "name": "bob"}, {"kind": "Robot", "name": "r"}]});
        let cells = row(&style, &rb, IncludeObject::None, false)["cells"].clone();
        assert_eq!(cells[1], "ClusterRole/view");
        assert_eq!(cells[3], "alice, bob");
        assert_eq!(cells[4], "devs");
        assert_eq!(cells[5], "ns/b");
    }

    #[test]
    fn role_created_at() {
        let style = TableStyle::Builtin(&ROLE);
        let cols = column_definitions(&style);
        assert_eq!(cols[1]["name"], "Created At");
        assert_eq!(cols[1]["type"], "date");
        let r = json!({"metadata": {"name": "r", "creationTimestamp": "2024-05-01T10:00:00Z"}});
        let cells = row(&style, &r, IncludeObject::None, false)["cells"].clone();
        assert_eq!(cells, json!(["r", "2024-05-01T10:00:00Z"]));
        let unset = json!({"metadata": {"name": "r"}});
        let cells = row(&style, &unset, IncludeObject::None, false)["cells"].clone();
        assert_eq!(cells[1], "0001-01-01T00:00:00Z");
    }
}
