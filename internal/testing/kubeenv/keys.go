package kubeenv

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
)

// writeServiceAccountKeys creates the RSA key pair the API server signs and verifies
// service-account tokens with, and returns the paths of the private and public keys.
func writeServiceAccountKeys(dir string) (keyPath, pubPath string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", fmt.Errorf("kubeenv: service-account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("kubeenv: service-account public key: %w", err)
	}
	keyPath = filepath.Join(dir, "sa.key")
	pubPath = filepath.Join(dir, "sa.pub")
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	if err := os.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("kubeenv: %w", err)
	}
	if err := os.WriteFile(pubPath, pubPEM, 0o600); err != nil {
		return "", "", fmt.Errorf("kubeenv: %w", err)
	}
	return keyPath, pubPath, nil
}

// newToken returns a random bearer token for the static token file.
func newToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("kubeenv: token: %w", err)
	}
	return fmt.Sprintf("%x", b), nil
}
