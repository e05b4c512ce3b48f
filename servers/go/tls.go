package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// certificate is what the server serves TLS with: the user's (--tls-cert, --tls-key) or a
// throwaway one (--tls), written to file for clients to trust with --ca.
type certificate struct {
	pair        tls.Certificate
	fingerprint string // SHA-256 of the leaf, colon-separated hex
	file        string // the throwaway's PEM, removed when the server stops; "" for the user's
}

// serverCertificate reads and checks the user's certificate and key, or makes a throwaway one;
// nil without TLS. Errors are one line naming the file, as the Node server's.
func serverCertificate(o options) (*certificate, error) {
	switch {
	case o.tlsThrowaway:
		return throwaway(o.host)
	case o.tlsCert == "":
		return nil, nil
	}
	certPEM, err := os.ReadFile(o.tlsCert)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert %s: cannot read it (%s)", o.tlsCert, errnoName(err))
	}
	keyPEM, err := os.ReadFile(o.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("--tls-key %s: cannot read it (%s)", o.tlsKey, errnoName(err))
	}
	if block, _ := pem.Decode(certPEM); block == nil || block.Type != "CERTIFICATE" {
		return nil, fmt.Errorf("--tls-cert %s: not a PEM certificate", o.tlsCert)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return nil, fmt.Errorf("--tls-key %s does not match the certificate in --tls-cert %s", o.tlsKey, o.tlsCert)
		}
		return nil, fmt.Errorf("--tls-key %s: not a usable private key (%v)", o.tlsKey, err)
	}
	return &certificate{pair: pair, fingerprint: fingerprint(pair.Certificate[0])}, nil
}

// throwaway makes a self-signed ECDSA P-256 certificate for localhost, the loopback addresses,
// this machine's name and the host listened on, valid for a week, as the Node server's --tls.
func throwaway(host string) (*certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "ws-json-vs-protobuf throwaway"},
		NotBefore:    now,
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if name, err := os.Hostname(); err == nil {
		template.DNSNames = append(template.DNSNames, name)
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		template.IPAddresses = append(template.IPAddresses, ip)
	} else if ip == nil && host != "" {
		template.DNSNames = append(template.DNSNames, host)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ws-bench-tls-")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, err
	}
	pair := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return &certificate{pair: pair, fingerprint: fingerprint(der), file: file}, nil
}

// remove deletes a throwaway certificate's file; nothing for the user's, or without TLS.
func (c *certificate) remove() {
	if c != nil && c.file != "" {
		_ = os.RemoveAll(filepath.Dir(c.file))
	}
}

func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	hex := make([]string, len(sum))
	for i, b := range sum {
		hex[i] = fmt.Sprintf("%02X", b)
	}
	return strings.Join(hex, ":")
}

// errnoName is ENOENT, EACCES ... as Node names them, so both servers say the same.
func errnoName(err error) string {
	switch {
	case os.IsNotExist(err):
		return "ENOENT"
	case os.IsPermission(err):
		return "EACCES"
	}
	return err.Error()
}
