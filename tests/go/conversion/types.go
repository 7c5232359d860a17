// Package conversion is a hub/spoke CRD (controller-runtime's conversion.Hub and
// conversion.Convertible) whose conversion webhook envtest wires to a controller-runtime
// webhook server, run on Crest's binaries.
package conversion

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
)

var (
	// V1 is the stored version, the hub.
	V1 = schema.GroupVersion{Group: "conv.example.com", Version: "v1"}
	// V2 is the spoke.
	V2 = schema.GroupVersion{Group: "conv.example.com", Version: "v2"}
)

// SpecV1 names the schedule cronSpec.
type SpecV1 struct {
	CronSpec string `json:"cronSpec,omitempty"`
	Replicas int64  `json:"replicas,omitempty"`
}

// SpecV2 names it schedule.
type SpecV2 struct {
	Schedule string `json:"schedule,omitempty"`
	Replicas int64  `json:"replicas,omitempty"`
}

// CronTabV1 is the hub.
type CronTabV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SpecV1 `json:"spec,omitempty"`
}

// CronTabV2 is the spoke.
type CronTabV2 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              SpecV2 `json:"spec,omitempty"`
}

// CronTabV1List lists hubs.
type CronTabV1List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronTabV1 `json:"items"`
}

// CronTabV2List lists spokes.
type CronTabV2List struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronTabV2 `json:"items"`
}

// Hub marks v1 as the hub.
func (*CronTabV1) Hub() {}

var _ conversion.Hub = &CronTabV1{}
var _ conversion.Convertible = &CronTabV2{}

// ConvertTo converts this v2 to the hub.
func (c *CronTabV2) ConvertTo(dst conversion.Hub) error {
	h := dst.(*CronTabV1)
	h.ObjectMeta = c.ObjectMeta
	h.Spec = SpecV1{CronSpec: c.Spec.Schedule, Replicas: c.Spec.Replicas}
	return nil
}

// ConvertFrom converts the hub to this v2.
func (c *CronTabV2) ConvertFrom(src conversion.Hub) error {
	h := src.(*CronTabV1)
	c.ObjectMeta = h.ObjectMeta
	c.Spec = SpecV2{Schedule: h.Spec.CronSpec, Replicas: h.Spec.Replicas}
	return nil
}

func (c *CronTabV1) DeepCopyObject() runtime.Object {
	out := *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (c *CronTabV2) DeepCopyObject() runtime.Object {
	out := *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

func (l *CronTabV1List) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]CronTabV1, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*CronTabV1)
	}
	return &out
}

func (l *CronTabV2List) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]CronTabV2, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*CronTabV2)
	}
	return &out
}

// AddToScheme registers both versions under the kind CronTab.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypeWithName(V1.WithKind("CronTab"), &CronTabV1{})
	s.AddKnownTypeWithName(V1.WithKind("CronTabList"), &CronTabV1List{})
	s.AddKnownTypeWithName(V2.WithKind("CronTab"), &CronTabV2{})
	s.AddKnownTypeWithName(V2.WithKind("CronTabList"), &CronTabV2List{})
	metav1.AddToGroupVersion(s, V1)
	metav1.AddToGroupVersion(s, V2)
	return nil
}
