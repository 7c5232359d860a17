package operator

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Finalizer is what the reconciler holds on every CronTab until it has cleaned up.
const Finalizer = "stable.example.com/cleanup"

// OwnerIndex indexes ConfigMaps by the name of their controlling CronTab.
const OwnerIndex = ".metadata.controller"

// CronTabReconciler keeps a ConfigMap per CronTab and reports it in the CronTab's status.
type CronTabReconciler struct {
	client.Client
	// CleanedUp receives the name of every CronTab whose finalizer was removed.
	CleanedUp chan<- string
}

// Reconcile implements reconcile.Reconciler.
func (r *CronTabReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var ct CronTab
	if err := r.Get(ctx, req.NamespacedName, &ct); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !ct.DeletionTimestamp.IsZero() {
		if controllerutil.RemoveFinalizer(&ct, Finalizer) {
			if err := r.Update(ctx, &ct); err != nil {
				return ctrl.Result{}, err
			}
			if r.CleanedUp != nil {
				r.CleanedUp <- ct.Name
			}
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(&ct, Finalizer) {
		if err := r.Update(ctx, &ct); err != nil {
			return ctrl.Result{}, err
		}
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ct.Namespace, Name: ct.Name + "-config"}}
	if _, err := controllerutil.CreateOrUpdate(ctx, r.Client, cm, func() error {
		cm.Data = map[string]string{"cronSpec": ct.Spec.CronSpec, "image": ct.Spec.Image}
		return controllerutil.SetControllerReference(&ct, cm, r.Scheme())
	}); err != nil {
		return ctrl.Result{}, err
	}
	ct.Status.Replicas = ct.Spec.Replicas
	meta.SetStatusCondition(&ct.Status.Conditions, metav1.Condition{
		Type:               "Ready",
		Status:             metav1.ConditionTrue,
		Reason:             "ConfigMapReady",
		Message:            "the ConfigMap " + cm.Name + " holds the schedule",
		ObservedGeneration: ct.Generation,
	})
	if err := r.Status().Update(ctx, &ct); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{Requeue: true}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// SetupWithManager registers the reconciler: CronTabs whose generation changed, and the
// ConfigMaps they own; plus the owner index on ConfigMaps.
func (r *CronTabReconciler) SetupWithManager(ctx context.Context, mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, OwnerIndex, func(o client.Object) []string {
		owner := metav1.GetControllerOf(o)
		if owner == nil || owner.APIVersion != GroupVersion.String() || owner.Kind != "CronTab" {
			return nil
		}
		return []string{owner.Name}
	}); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&CronTab{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Owns(&corev1.ConfigMap{}).
		Complete(r)
}

// Key of a CronTab.
func Key(ns, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: name}
}
