//! The `telemetry:` section: where traces go (OTLP over HTTP) and what share of them is kept.
//! Off unless `telemetry.otlp` is given; off costs nothing on the call path.

use http::Uri;
use serde::Deserialize;

use super::Problems;

/// Validated `telemetry:` settings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// Traces over OTLP/HTTP; `None`: no span is made at all.
    pub otlp: Option<Otlp>,
}

/// `telemetry.otlp`: a collector's OTLP/HTTP endpoint and the sampling ratio.
#[derive(Debug, Clone, PartialEq)]
pub struct Otlp {
    /// Where spans are POSTed (protobuf): the configured base with `/v1/traces` appended,
    /// unless it already ends so (the `OTEL_EXPORTER_OTLP_ENDPOINT` convention).
    pub traces_url: Uri,
    /// The share of new traces kept, in 0..=1; a caller's sampled `traceparent` is followed.
    pub sample: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    otlp: Option<RawOtlp>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOtlp {
    endpoint: String,
    sample: Option<f64>,
}

const TRACES_PATH: &str = "/v1/traces";

pub(crate) fn compile(raw: Raw, p: &mut Problems) -> Settings {
    let Some(otlp) = raw.otlp else { return Settings::default() };
    let traces_url = traces_url(&otlp.endpoint).map_err(|why| p.add("telemetry.otlp.endpoint", why)).ok();
    let sample = otlp.sample.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&sample) {
        p.add("telemetry.otlp.sample", format!("{sample} is not a ratio between 0 and 1"));
    }
    Settings { otlp: traces_url.map(|traces_url| Otlp { traces_url, sample: sample.clamp(0.0, 1.0) }) }
}

/// The traces URL for a configured endpoint: `http` or `https`, a host, no credentials in it
/// (a collector's token belongs in a variable, not in a file), no query or fragment.
fn traces_url(endpoint: &str) -> Result<Uri, String> {
    let not = |why: &str| format!("{endpoint:?} is not an OTLP/HTTP endpoint: {why}");
    let uri: Uri = endpoint.parse().map_err(|_| not("not a URL"))?;
    if !matches!(uri.scheme_str(), Some("http" | "https")) {
        return Err(not("the scheme must be http or https (OTLP/gRPC is not spoken)"));
    }
    let Some(authority) = uri.authority() else { return Err(not("no host")) };
    if authority.as_str().contains('@') {
        return Err(not("credentials in the URL would be logged and sent in clear"));
    }
    if uri.query().is_some() || endpoint.contains('#') {
        return Err(not("a query or fragment has no meaning here"));
    }
    let base = uri.path().trim_end_matches('/');
    let path = if base.ends_with(TRACES_PATH) { base.to_owned() } else { format!("{base}{TRACES_PATH}") };
    let scheme = uri.scheme_str().unwrap_or("http");
    format!("{scheme}://{authority}{path}").parse().map_err(|_| not("not a URL"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compiled(yaml: &str) -> (Settings, Vec<String>) {
        let raw: Raw = serde_saphyr::from_str(yaml).expect("yaml");
        let mut p = Problems::default();
        let s = compile(raw, &mut p);
        (s, p.problems.iter().map(|p| format!("{}: {}", p.path, p.message)).collect())
    }

    #[test]
    fn endpoints_are_read_as_the_otlp_convention_reads_them() {
        let table = [
            ("http://127.0.0.1:4318", "http://127.0.0.1:4318/v1/traces"),
            ("http://127.0.0.1:4318/", "http://127.0.0.1:4318/v1/traces"),
            ("https://otel.example:443/v1/traces", "https://otel.example:443/v1/traces"),
            ("https://otel.example/prefix", "https://otel.example/prefix/v1/traces"),
        ];
        for (given, want) in table {
            assert_eq!(traces_url(given).as_ref().map(Uri::to_string), Ok(want.to_owned()), "{given}");
        }
    }

    #[test]
    fn endpoints_that_are_not_otlp_http_are_refused() {
        for bad in [
            "127.0.0.1:4318",
            "grpc://127.0.0.1:4317",
            "ftp://host/x",
            "http://user:pw@host:4318",
            "http://host:4318/v1/traces?token=x",
            "http://host:4318/#x",
            "",
        ] {
            assert!(traces_url(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn telemetry_is_off_unless_configured_and_sample_defaults_to_all() {
        assert_eq!(compiled("{}").0, Settings::default());
        let (s, problems) = compiled("otlp: { endpoint: \"http://127.0.0.1:4318\" }");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(s.otlp.map(|o| o.sample), Some(1.0));
    }

    #[test]
    fn a_sample_outside_zero_to_one_is_a_problem() {
        for bad in ["1.5", "-0.1", ".nan"] {
            let (_, problems) = compiled(&format!("otlp: {{ endpoint: \"http://h:1\", sample: {bad} }}"));
            assert_eq!(problems.len(), 1, "{bad}: {problems:?}");
            assert!(problems[0].starts_with("telemetry.otlp.sample"), "{problems:?}");
        }
    }

    #[test]
    fn unknown_keys_are_refused() {
        assert!(serde_saphyr::from_str::<Raw>("otlp: { endpoint: \"http://h:1\", smaple: 1 }").is_err());
        assert!(serde_saphyr::from_str::<Raw>("otel: {}").is_err());
    }
}
