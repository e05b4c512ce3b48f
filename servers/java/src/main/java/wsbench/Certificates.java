package wsbench;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.io.IOException;
import java.io.StringReader;
import java.io.StringWriter;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * What the server serves TLS with: the user's certificate and key (--tls-cert, --tls-key), read
 * and checked before anything listens, or a throwaway one (--tls), written to a file for clients
 * to trust with --ca. Errors are one line naming the file, as the Node and Go servers word them.
 */
final class Certificates {
  /** The TLS context, the throwaway's file (null for the user's) and its SHA-256 fingerprint. */
  record Served(SslContext context, Path file, String fingerprint) {
    /** Deletes a throwaway certificate's file and folder; nothing for the user's. */
    void remove() {
      if (file == null) return;
      try {
        Files.deleteIfExists(file);
        Files.deleteIfExists(file.getParent());
      } catch (IOException e) {
        System.err.println("wsbench-server: cannot remove " + file + ": " + e.getMessage());
      }
    }
  }

  private Certificates() {}

  /** The certificate the options ask for; null without TLS. */
  static Served of(Options options) throws UsageError, GeneralSecurityException, IOException {
    if (options.tlsThrowaway()) return throwaway(options.host());
    if (options.tlsCert().isEmpty()) return null;
    String certText = read("--tls-cert", options.tlsCert());
    String keyText = read("--tls-key", options.tlsKey());
    if (!certText.contains("-----BEGIN CERTIFICATE-----")) throw new UsageError("--tls-cert " + options.tlsCert() + ": not a PEM certificate");
    List<X509Certificate> chain = new ArrayList<>();
    for (var certificate : CertificateFactory.getInstance("X.509").generateCertificates(
        new java.io.ByteArrayInputStream(certText.getBytes(StandardCharsets.US_ASCII)))) {
      chain.add((X509Certificate) certificate);
    }
    PrivateKey key = privateKey(options.tlsKey(), keyText);
    if (!matches(key, chain.get(0))) {
      throw new UsageError("--tls-key " + options.tlsKey() + " does not match the certificate in --tls-cert " + options.tlsCert());
    }
    return new Served(context(key, chain.toArray(X509Certificate[]::new)), null, fingerprint(chain.get(0)));
  }

  private static String read(String option, String file) throws UsageError {
    try {
      return Files.readString(Path.of(file), StandardCharsets.US_ASCII);
    } catch (NoSuchFileException e) {
      throw new UsageError(option + " " + file + ": cannot read it (ENOENT)");
    } catch (AccessDeniedException e) {
      throw new UsageError(option + " " + file + ": cannot read it (EACCES)");
    } catch (IOException e) {
      throw new UsageError(option + " " + file + ": cannot read it (" + e.getMessage() + ")");
    }
  }

  private static PrivateKey privateKey(String file, String text) throws UsageError {
    try (var parser = new PEMParser(new StringReader(text))) {
      Object parsed = parser.readObject();
      var converter = new JcaPEMKeyConverter();
      if (parsed instanceof PEMKeyPair pair) return converter.getKeyPair(pair).getPrivate();
      if (parsed instanceof PrivateKeyInfo info) return converter.getPrivateKey(info);
    } catch (IOException e) {
      throw new UsageError("--tls-key " + file + ": not a usable private key (" + e.getMessage() + ")");
    }
    throw new UsageError("--tls-key " + file + ": not a usable private key (no PEM private key in it)");
  }

  /** Whether the key signs what the certificate's public key verifies. */
  private static boolean matches(PrivateKey key, X509Certificate certificate) throws GeneralSecurityException {
    String algorithm = key.getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256with" + key.getAlgorithm();
    byte[] probe = "wsbench".getBytes(StandardCharsets.US_ASCII);
    Signature signer = Signature.getInstance(algorithm);
    signer.initSign(key);
    signer.update(probe);
    byte[] signature = signer.sign();
    Signature verifier = Signature.getInstance(algorithm);
    try {
      verifier.initVerify(certificate.getPublicKey());
      verifier.update(probe);
      return verifier.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  /**
   * A self-signed ECDSA P-256 certificate for localhost, the loopback addresses, this machine's
   * name and the host listened on, valid for 7 days, as the Node server's --tls.
   */
  private static Served throwaway(String host) throws GeneralSecurityException, IOException {
    var generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp256r1"));
    KeyPair pair = generator.generateKeyPair();
    var names = new ArrayList<GeneralName>(List.of(
        new GeneralName(GeneralName.dNSName, "localhost"),
        new GeneralName(GeneralName.iPAddress, "127.0.0.1"),
        new GeneralName(GeneralName.iPAddress, "::1"),
        new GeneralName(GeneralName.dNSName, InetAddress.getLocalHost().getHostName())));
    if (!host.isEmpty() && !host.equals("0.0.0.0") && !host.equals("::")) {
      boolean address = host.matches("[\\d.]+|.*:.*");
      names.add(new GeneralName(address ? GeneralName.iPAddress : GeneralName.dNSName, host));
    }
    Instant now = Instant.now();
    var subject = new X500Name("CN=ws-json-vs-protobuf throwaway");
    var builder = new JcaX509v3CertificateBuilder(subject, new BigInteger(62, new SecureRandom()), Date.from(now),
        Date.from(now.plus(Duration.ofDays(7))), subject, pair.getPublic())
        .addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
    X509Certificate certificate;
    try {
      certificate = new JcaX509CertificateConverter().getCertificate(
          builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(pair.getPrivate())));
    } catch (org.bouncycastle.operator.OperatorCreationException e) {
      throw new GeneralSecurityException(e);
    }
    Path dir = Files.createTempDirectory("ws-bench-tls-");
    Path file = dir.resolve("cert.pem");
    var pem = new StringWriter();
    try (var writer = new JcaPEMWriter(pem)) {
      writer.writeObject(certificate);
    }
    Files.writeString(file, pem.toString());
    return new Served(context(pair.getPrivate(), certificate), file, fingerprint(certificate));
  }

  private static SslContext context(PrivateKey key, X509Certificate... chain) throws IOException {
    return SslContextBuilder.forServer(key, chain).sslProvider(SslProvider.JDK).protocols("TLSv1.3", "TLSv1.2").build();
  }

  private static String fingerprint(X509Certificate certificate) throws GeneralSecurityException {
    byte[] sum = MessageDigest.getInstance("SHA-256").digest(certificate.getEncoded());
    return HexFormat.ofDelimiter(":").withUpperCase().formatHex(sum);
  }
}
