package controller

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
)

// metaExtractList returns the items of a typed list.
func metaExtractList(list runtime.Object) ([]runtime.Object, error) { return meta.ExtractList(list) }
