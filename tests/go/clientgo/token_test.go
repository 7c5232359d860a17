package clientgo

import (
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/utils/ptr"
)

var authenticationv1TokenRequest = authenticationv1.TokenRequest{
	Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)},
}
