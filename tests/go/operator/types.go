// Package operator is a kubebuilder-style operator for the seed's CronTab CRD, tested with
// controller-runtime's envtest on Crest's binaries.
package operator

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion of the CronTab API.
var GroupVersion = schema.GroupVersion{Group: "stable.example.com", Version: "v1"}

// CronTabSpec is the desired state.
type CronTabSpec struct {
	CronSpec string `json:"cronSpec,omitempty"`
	Image    string `json:"image,omitempty"`
	Replicas int32  `json:"replicas,omitempty"`
}

// CronTabStatus is the observed state.
type CronTabStatus struct {
	Replicas   int32              `json:"replicas,omitempty"`
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CronTab is the seed's custom resource.
type CronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CronTabSpec   `json:"spec,omitempty"`
	Status            CronTabStatus `json:"status,omitempty"`
}

// CronTabList is a list of CronTabs.
type CronTabList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronTab `json:"items"`
}

// DeepCopyInto copies c into out.
func (c *CronTab) DeepCopyInto(out *CronTab) {
	*out = *c
	out.TypeMeta = c.TypeMeta
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = c.Spec
	out.Status.Replicas = c.Status.Replicas
	if c.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(c.Status.Conditions))
		for i := range c.Status.Conditions {
			c.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

// DeepCopy returns a copy of c.
func (c *CronTab) DeepCopy() *CronTab {
	if c == nil {
		return nil
	}
	out := new(CronTab)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (c *CronTab) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (l *CronTabList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(CronTabList)
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]CronTab, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// AddToScheme registers the CronTab types.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &CronTab{}, &CronTabList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
