//! The TLS connector: rustls with ring, a `MakeTlsConnect` of our own over
//! tokio-rustls. Not tokio-postgres-rustls: it would bring an X.509 parser
//! crate for channel binding (here: reading the signature algorithm's OID
//! is a few lines of DER) and still leave verify-ca and libpq's `require`
//! to a verifier of our own.

use std::error::Error as StdError;
use std::fmt;
use std::fs;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};
use tokio_postgres::{Client, Connection, Socket};

use super::{FileSetting, RootCert, SslMode, TlsSettings};
use crate::Error;

/// The connection's stream: TLS or plain, one type.
pub type Stream = RustlsStream<Socket>;

type Connected = (Client, Connection<Socket, Stream>);

/// Without TLS (the connector is never asked).
pub(crate) async fn plain(config: &tokio_postgres::Config) -> crate::Result<Connected> {
    let mut config = config.clone();
    config.ssl_mode(tokio_postgres::config::SslMode::Disable);
    Ok(config.connect(MakeRustls::none()).await?)
}

/// With TLS as `tls.mode` says (`Disable` is handled by the caller).
pub(crate) async fn connect(
    mut config: tokio_postgres::Config,
    tls: &TlsSettings,
) -> crate::Result<Connected> {
    use tokio_postgres::config::SslMode as PgMode;
    match tls.mode {
        SslMode::Disable => plain(&config).await,
        SslMode::Allow => match plain(&config).await {
            Ok(connected) => Ok(connected),
            Err(without) => {
                config.ssl_mode(PgMode::Require);
                let make = MakeRustls::new(tls)?;
                config.connect(make).await.map_err(|with| {
                    Error::Tls(format!(
                        "sslmode=allow: without TLS: {without}; with TLS: {with}"
                    ))
                })
            }
        },
        SslMode::Prefer => {
            config.ssl_mode(PgMode::Prefer);
            let make = MakeRustls::new(tls)?;
            let failed = make.handshake_failed.clone();
            match config.connect(make).await {
                Ok(connected) => Ok(connected),
                // libpq's prefer: a failed handshake falls back to plain.
                Err(e) if failed.load(Ordering::Relaxed) => {
                    tracing::debug!("sslmode=prefer: {e}; trying without TLS");
                    plain(&config).await
                }
                Err(e) => Err(e.into()),
            }
        }
        SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
            config.ssl_mode(PgMode::Require);
            Ok(config.connect(MakeRustls::new(tls)?).await?)
        }
    }
}

/// What the connector checks of the server's certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Nothing (require, prefer, allow without a root certificate file).
    Nothing,
    /// Its chain up to a root (verify-ca; require with a root file).
    Chain,
    /// Its chain and the host name (verify-full).
    Full,
}

/// The `MakeTlsConnect` tokio-postgres takes.
#[derive(Clone)]
pub struct MakeRustls {
    config: Option<Arc<ClientConfig>>,
    explain: Arc<Explain>,
    handshake_failed: Arc<AtomicBool>,
}

/// What an error message names.
struct Explain {
    mode: SslMode,
    roots: String,
    client_cert: Option<String>,
}

impl MakeRustls {
    fn none() -> MakeRustls {
        MakeRustls {
            config: None,
            explain: Arc::new(Explain {
                mode: SslMode::Disable,
                roots: String::new(),
                client_cert: None,
            }),
            handshake_failed: Arc::default(),
        }
    }

    /// Reads the files `tls` names and builds the client's TLS config.
    fn new(tls: &TlsSettings) -> crate::Result<MakeRustls> {
        let fail = |why: String| Error::Tls(format!("sslmode={}: {why}", tls.mode));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (roots, roots_named) = match &tls.rootcert {
            Some(RootCert::System) => (
                Some(RootCertStore {
                    roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
                }),
                "the system roots (sslrootcert=system: Mozilla's, from webpki-roots)".to_string(),
            ),
            Some(RootCert::File(file)) if file.source.explicit() || file.path.exists() => {
                (Some(read_roots(file).map_err(fail)?), file.to_string())
            }
            Some(RootCert::File(file)) => (None, file.to_string()),
            None => (
                None,
                "no sslrootcert (and no HOME for libpq's default)".into(),
            ),
        };
        let check = match (tls.mode, &roots) {
            (SslMode::VerifyFull, Some(_)) => Check::Full,
            (SslMode::VerifyCa, Some(_)) => Check::Chain,
            (mode, None) if mode.verifies() => {
                return Err(fail(format!(
                    "no root certificate to check the server's against: {roots_named} does not \
                     exist; set sslrootcert or PGSSLROOTCERT to the CA's PEM file, use \
                     sslrootcert=system, or choose sslmode=require"
                )))
            }
            // libpq: with a root certificate file, require checks the chain.
            (_, Some(_)) => Check::Chain,
            (_, None) => Check::Nothing,
        };
        let verifier = Verifier {
            check,
            inner: match roots {
                Some(store) => Some(
                    WebPkiServerVerifier::builder_with_provider(Arc::new(store), provider.clone())
                        .build()
                        .map_err(|e| fail(format!("{roots_named}: {e}")))?,
                ),
                None => None,
            },
            provider: provider.clone(),
        };
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| fail(e.to_string()))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier));
        let (config, client_cert) = match client_identity(tls).map_err(fail)? {
            Some((cert, certs, key)) => (
                builder
                    .with_client_auth_cert(certs, key)
                    .map_err(|e| fail(format!("{cert}: {e}")))?,
                Some(cert.to_string()),
            ),
            None => (builder.with_no_client_auth(), None),
        };
        Ok(MakeRustls {
            config: Some(Arc::new(config)),
            explain: Arc::new(Explain {
                mode: tls.mode,
                roots: roots_named,
                client_cert,
            }),
            handshake_failed: Arc::default(),
        })
    }
}

fn read_roots(file: &FileSetting) -> Result<RootCertStore, String> {
    let text = read(file)?;
    let mut store = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&text) {
        let cert = cert.map_err(|e| format!("{file}: not PEM: {e}"))?;
        store
            .add(cert)
            .map_err(|e| format!("{file}: not a usable CA certificate: {e}"))?;
    }
    if store.is_empty() {
        return Err(format!(
            "{file}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(store)
}

fn read(file: &FileSetting) -> Result<Vec<u8>, String> {
    fs::read(&file.path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => format!("{file}: no such file"),
        _ => format!("{file}: cannot be read: {e}"),
    })
}

/// The client certificate and key, when there is one (libpq: a default
/// `postgresql.crt` that does not exist means none; one that does needs
/// its key).
#[allow(clippy::type_complexity)]
fn client_identity(
    tls: &TlsSettings,
) -> Result<
    Option<(
        &FileSetting,
        Vec<CertificateDer<'static>>,
        PrivateKeyDer<'static>,
    )>,
    String,
> {
    let Some(cert) = &tls.cert else {
        return Ok(None);
    };
    if !cert.source.explicit() && !cert.path.exists() {
        return Ok(None);
    }
    let text = read(cert)?;
    let certs = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{cert}: not PEM: {e}"))?;
    if certs.is_empty() {
        return Err(format!(
            "{cert}: holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
        ));
    }
    let Some(key) = &tls.key else {
        return Err(format!(
            "{cert} is set but no sslkey (set sslkey or PGSSLKEY)"
        ));
    };
    let text = read(key).map_err(|e| format!("{e} (the key of {cert})"))?;
    check_key_permissions(key)?;
    let der = PrivateKeyDer::from_pem_slice(&text).map_err(|e| {
        format!("{key}: no PEM private key (PKCS#8, PKCS#1 or SEC1; unencrypted): {e}")
    })?;
    Ok(Some((cert, certs, der)))
}

/// libpq's rule: the key readable by its owner only (0600), or also by its
/// group (0640) when root owns it.
fn check_key_permissions(key: &FileSetting) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(&key.path).map_err(|e| format!("{key}: {e}"))?;
    let mode = meta.mode() & 0o777;
    let too_open = if meta.uid() == 0 {
        mode & 0o037 != 0
    } else {
        mode & 0o077 != 0
    };
    if too_open {
        return Err(format!(
            "{key}: has group or world access ({mode:04o}); it must be 0600 or less \
             (0640 or less when root owns it)"
        ));
    }
    Ok(())
}

/// The server's certificate checked as `check` says.
#[derive(Debug)]
struct Verifier {
    check: Check,
    inner: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(inner) = self.inner.as_ref().filter(|_| self.check != Check::Nothing) else {
            return Ok(ServerCertVerified::assertion());
        };
        // The chain is checked before the name: a name error means the
        // chain is good.
        match inner.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if self.check == Check::Chain => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// A TLS failure, said in hookd's words.
#[derive(Debug)]
pub struct TlsError(String);

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl StdError for TlsError {}

impl MakeTlsConnect<Socket> for MakeRustls {
    type Stream = RustlsStream<Socket>;
    type TlsConnect = RustlsConnect;
    type Error = TlsError;

    fn make_tls_connect(&mut self, domain: &str) -> Result<RustlsConnect, TlsError> {
        // Asked for every TCP connection, sslmode=disable's too: what can
        // fail waits for the handshake.
        Ok(RustlsConnect {
            config: self.config.clone(),
            host: domain.to_string(),
            explain: self.explain.clone(),
            handshake_failed: self.handshake_failed.clone(),
        })
    }
}

/// One handshake.
pub struct RustlsConnect {
    config: Option<Arc<ClientConfig>>,
    host: String,
    explain: Arc<Explain>,
    handshake_failed: Arc<AtomicBool>,
}

impl TlsConnect<Socket> for RustlsConnect {
    type Stream = RustlsStream<Socket>;
    type Error = TlsError;
    type Future = Pin<Box<dyn Future<Output = Result<RustlsStream<Socket>, TlsError>> + Send>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let mode = self.explain.mode;
            let config = self
                .config
                .ok_or_else(|| TlsError(format!("sslmode={mode}: TLS was not set up")))?;
            let name = ServerName::try_from(self.host.clone()).map_err(|e| {
                TlsError(format!(
                    "sslmode={mode}: `{}` is not a host name or an IP address: {e}",
                    self.host
                ))
            })?;
            let connector = tokio_rustls::TlsConnector::from(config);
            match connector.connect(name, stream).await {
                Ok(stream) => Ok(RustlsStream(stream)),
                Err(e) => {
                    self.handshake_failed.store(true, Ordering::Relaxed);
                    Err(TlsError(explain(&e, &self.host, &self.explain)))
                }
            }
        })
    }
}

/// A handshake's failure: what was wrong, which sslmode, which file.
fn explain(e: &io::Error, host: &str, explain: &Explain) -> String {
    let mode = explain.mode;
    let roots = &explain.roots;
    let Some(tls_error) = e.get_ref().and_then(|e| e.downcast_ref::<rustls::Error>()) else {
        return format!("sslmode={mode}: the TLS handshake with `{host}` failed: {e}");
    };
    match tls_error {
        rustls::Error::InvalidCertificate(problem) => match problem {
            CertificateError::UnknownIssuer => format!(
                "sslmode={mode}: the server's certificate is not trusted: no certificate \
                 authority in {roots} signed it"
            ),
            CertificateError::NotValidForName => format!(
                "sslmode={mode}: the server's certificate is not valid for the host name \
                 `{host}`"
            ),
            CertificateError::NotValidForNameContext { presented, .. } => format!(
                "sslmode={mode}: the server's certificate is not valid for the host name \
                 `{host}` (it names {})",
                presented.join(", ")
            ),
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                format!("sslmode={mode}: the server's certificate has expired")
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                format!("sslmode={mode}: the server's certificate is not valid yet")
            }
            other => format!(
                "sslmode={mode}: the server's certificate was refused checking it against \
                 {roots}: {other:?}"
            ),
        },
        rustls::Error::AlertReceived(alert) => format!(
            "sslmode={mode}: the server ended the TLS handshake ({alert:?}){}",
            match &explain.client_cert {
                Some(cert) => format!("; the client certificate was {cert}"),
                None => "; no client certificate was sent".into(),
            }
        ),
        other => format!("sslmode={mode}: the TLS handshake with `{host}` failed: {other}"),
    }
}

/// The stream, once encrypted.
pub struct RustlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for RustlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for RustlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> TlsStream for RustlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM-SHA-256-PLUS's tls-server-end-point (RFC 5929): the
        // server certificate's hash, by its signature's hash algorithm.
        let (_, session) = self.0.get_ref();
        match session
            .peer_certificates()
            .and_then(|certs| certs.first())
            .and_then(|cert| tls_server_end_point(cert))
        {
            Some(hash) => ChannelBinding::tls_server_end_point(hash),
            None => ChannelBinding::none(),
        }
    }
}

/// RFC 5929's hash of a DER certificate: SHA-256 for signatures made with
/// MD5, SHA-1 or SHA-256, else the signature's own hash (SHA-384, SHA-512);
/// `None` for what names no hash here (RSASSA-PSS, EdDSA): then no channel
/// binding is offered.
fn tls_server_end_point(cert: &[u8]) -> Option<Vec<u8>> {
    use sha2::Digest;
    // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, … }
    let (certificate, _) = der(cert, 0x30)?;
    let (_, rest) = der(certificate, 0x30)?;
    let (algorithm, _) = der(rest, 0x30)?;
    let (oid, _) = der(algorithm, 0x06)?;
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA_SHA2: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03];
    const ECDSA_SHA1: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x01];
    enum Hash {
        Sha256,
        Sha384,
        Sha512,
    }
    let hash = match oid {
        // md5, sha1, sha256, sha384, sha512 WithRSAEncryption
        [rsa @ .., 0x04 | 0x05 | 0x0b] if rsa == RSA => Hash::Sha256,
        [rsa @ .., 0x0c] if rsa == RSA => Hash::Sha384,
        [rsa @ .., 0x0d] if rsa == RSA => Hash::Sha512,
        o if o == ECDSA_SHA1 => Hash::Sha256,
        [ec @ .., 0x02] if ec == ECDSA_SHA2 => Hash::Sha256,
        [ec @ .., 0x03] if ec == ECDSA_SHA2 => Hash::Sha384,
        [ec @ .., 0x04] if ec == ECDSA_SHA2 => Hash::Sha512,
        _ => return None,
    };
    Some(match hash {
        Hash::Sha256 => sha2::Sha256::digest(cert).to_vec(),
        Hash::Sha384 => sha2::Sha384::digest(cert).to_vec(),
        Hash::Sha512 => sha2::Sha512::digest(cert).to_vec(),
    })
}

/// One DER element of type `tag` at the start of `bytes`: its contents and
/// what follows it.
fn der(bytes: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&first, rest) = bytes.split_first()?;
    if first != tag {
        return None;
    }
    let (&len, mut rest) = rest.split_first()?;
    let len = if len < 0x80 {
        usize::from(len)
    } else {
        let n = usize::from(len & 0x7f);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let (digits, after) = rest.split_at(n);
        rest = after;
        digits
            .iter()
            .fold(0usize, |acc, d| (acc << 8) | usize::from(*d))
    };
    (rest.len() >= len).then(|| rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A certificate's outline: an empty tbsCertificate, then the
    /// signature algorithm `oid` (long-form lengths where they are long).
    fn outline(oid: &[u8]) -> Vec<u8> {
        let mut algorithm = vec![0x06, oid.len() as u8];
        algorithm.extend_from_slice(oid);
        let mut body = vec![0x30, 0x00, 0x30, algorithm.len() as u8];
        body.extend(algorithm);
        body.extend(std::iter::repeat_n(0, 200)); // the "signature"
        let mut cert = vec![0x30, 0x81, body.len() as u8];
        cert.extend(body);
        cert
    }

    #[test]
    fn the_end_point_hash_follows_the_signature_algorithm() {
        let rsa_sha1 = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x05];
        let rsa_sha512 = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0d];
        let ecdsa_sha384 = [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, 0x03];
        let rsa_pss = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0a];
        let len = |oid: &[u8]| tls_server_end_point(&outline(oid)).map(|h| h.len());
        assert_eq!(len(&rsa_sha1), Some(32), "SHA-1 is raised to SHA-256");
        assert_eq!(len(&rsa_sha512), Some(64));
        assert_eq!(len(&ecdsa_sha384), Some(48));
        assert_eq!(
            len(&rsa_pss),
            None,
            "PSS names its hash elsewhere: no binding"
        );
        assert_eq!(tls_server_end_point(b"not DER"), None);
        let mut cut = outline(&ecdsa_sha384);
        cut.truncate(20);
        assert_eq!(tls_server_end_point(&cut), None);
    }
}
