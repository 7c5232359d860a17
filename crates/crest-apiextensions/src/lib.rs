//! apiextensions.k8s.io/v1 CustomResourceDefinition: types, validation, naming and conditions.
