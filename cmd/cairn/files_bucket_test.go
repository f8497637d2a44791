package main

import (
	"testing"

	"gocloud.dev/blob"
)

// TestFileBucketSchemes checks that every bucket URL scheme --blob-url
// documents has a driver linked in. It opens nothing: a cloud bucket without
// credentials may fail only at first use, so the scheme's registration is
// what can be checked without the network.
func TestFileBucketSchemes(t *testing.T) {
	mux := blob.DefaultURLMux()
	for _, scheme := range []string{"file", "mem", "s3", "gs", "azblob"} {
		if !mux.ValidBucketScheme(scheme) {
			t.Errorf("--blob-url scheme %s:// has no driver linked", scheme)
		}
	}
	if mux.ValidBucketScheme("nosuchscheme") {
		t.Error("an unknown scheme reports a driver")
	}
}
