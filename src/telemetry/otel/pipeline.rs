//! The trace pipeline: a subscriber layer installed before the config is read, whose sampler and
//! span processor are filled in once, by [`start`], when `telemetry.otlp` is configured.

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::trace::{Link, SpanKind, TraceId, TracerProvider as _};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{
    BatchSpanProcessor, Sampler, SamplingResult, SdkTracer, SdkTracerProvider, ShouldSample, Span, SpanData,
    SpanProcessor,
};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Metadata, Subscriber};
use tracing_subscriber::filter::Filtered;
use tracing_subscriber::layer::{Context as LayerContext, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::client::Client;
use super::TARGET;
use crate::config::telemetry::Settings;

/// How long one export may take (connect, send, answer).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// What [`start`] fills in: the sampler new traces are judged by, and the batching exporter.
#[derive(Debug)]
struct Pipeline {
    sampler: Sampler,
    processor: BatchSpanProcessor,
}

static PIPELINE: OnceLock<Pipeline> = OnceLock::new();

/// Whether traces are on: one atomic load, the whole cost of tracing when they are off.
#[inline]
pub fn on() -> bool {
    PIPELINE.get().is_some()
}

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("telemetry.otlp needs a tokio runtime to export from")]
    NoRuntime,
    #[error("the OTLP exporter cannot be built")]
    Exporter(#[source] opentelemetry_otlp::ExporterBuildError),
}

/// Starts exporting as `settings` say (nothing when `telemetry.otlp` is absent). Once per
/// process: a second call (a second proxy in one test process) keeps the first pipeline.
pub fn start(settings: &Settings) -> Result<(), StartError> {
    let Some(otlp) = &settings.otlp else { return Ok(()) };
    if on() {
        tracing::warn!("telemetry already started in this process: keeping the first exporter");
        return Ok(());
    }
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| StartError::NoRuntime)?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(Client::new(runtime, EXPORT_TIMEOUT))
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(otlp.traces_url.to_string())
        .with_timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(StartError::Exporter)?;
    let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(otlp.sample)));
    let mut processor = BatchSpanProcessor::builder(exporter).build();
    // The provider hands its resource to the processors it was built with; this one came later.
    processor.set_resource(&resource());
    if PIPELINE.set(Pipeline { sampler, processor }).is_ok() {
        // The trace layer's level hint changes from off to info: callsites are asked again.
        tracing::callsite::rebuild_interest_cache();
        tracing::info!(endpoint = %otlp.traces_url, sample = otlp.sample, "exporting traces over OTLP/HTTP");
    }
    Ok(())
}

/// Exports every finished span now (blocking: call it off the runtime's workers, at exit).
pub fn flush() {
    if let Some(p) = PIPELINE.get() {
        if let Err(e) = p.processor.force_flush() {
            tracing::warn!(error = %e, "could not export the last spans");
        }
    }
}

/// The trace layer as the logging set-up installs it, under any registry-based subscriber.
pub type OtelLayer<S> = Filtered<tracing_opentelemetry::OpenTelemetryLayer<S, SdkTracer>, OnlyTraces, S>;

/// The trace layer: sees only [`TARGET`]'s spans; exports nothing until [`start`].
pub fn layer<S>() -> OtelLayer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    let provider = SdkTracerProvider::builder()
        .with_sampler(LateSampler)
        .with_span_processor(LateProcessor)
        .with_resource(resource())
        .build();
    let tracer = provider.tracer("portcullis");
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_target(false)
        .with_filter(OnlyTraces)
}

/// What every exported span says it came from.
fn resource() -> opentelemetry_sdk::Resource {
    opentelemetry_sdk::Resource::builder()
        .with_service_name("portcullis")
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}

/// The trace layer's filter: [`TARGET`]'s callsites only, and no level at all until [`start`]
/// (so the subscriber's level hint, and with it every log callsite's cost, is as without it).
#[derive(Debug, Clone, Copy)]
pub struct OnlyTraces;

impl<S> Filter<S> for OnlyTraces {
    fn enabled(&self, meta: &Metadata<'_>, _: &LayerContext<'_, S>) -> bool {
        meta.target() == TARGET
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        match meta.target() == TARGET {
            true => Interest::always(),
            false => Interest::never(),
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(if on() { LevelFilter::INFO } else { LevelFilter::OFF })
    }
}

/// The sampler [`start`] configured (none sampled before).
#[derive(Debug, Clone)]
struct LateSampler;

impl ShouldSample for LateSampler {
    fn should_sample(
        &self,
        parent: Option<&Context>,
        trace_id: TraceId,
        name: &str,
        kind: &SpanKind,
        attributes: &[KeyValue],
        links: &[Link],
    ) -> SamplingResult {
        match PIPELINE.get() {
            Some(p) => p.sampler.should_sample(parent, trace_id, name, kind, attributes, links),
            None => Sampler::AlwaysOff.should_sample(parent, trace_id, name, kind, attributes, links),
        }
    }
}

/// The batch processor [`start`] configured (spans ended before are dropped).
#[derive(Debug)]
struct LateProcessor;

impl SpanProcessor for LateProcessor {
    fn on_start(&self, span: &mut Span, cx: &Context) {
        if let Some(p) = PIPELINE.get() {
            p.processor.on_start(span, cx);
        }
    }

    fn on_end(&self, span: SpanData) {
        if let Some(p) = PIPELINE.get() {
            p.processor.on_end(span);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        PIPELINE.get().map_or(Ok(()), |p| p.processor.force_flush())
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        PIPELINE.get().map_or(Ok(()), |p| p.processor.shutdown_with_timeout(timeout))
    }
}
