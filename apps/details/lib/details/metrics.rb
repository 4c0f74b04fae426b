# frozen_string_literal: true

require "prometheus/client"
require "prometheus/client/formats/text"
require "securerandom"

module Details
  # The two catalogue metrics (docs/configuration.md) in a Prometheus client
  # registry of the server's own, labelled method, route and status.
  class Metrics
    BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].freeze
    REQUESTS_HELP = "HTTP requests served, by method, route pattern and status."
    DURATION_HELP = "Time to serve an HTTP request, by method, route pattern and status."
    # A scrape answers with a render at most this old (DESIGN.md, "A crowd of scrapes").
    MAX_RENDER_AGE_SECONDS = 1.0

    # One process: values in memory (SimpleValue), not mmap files, whose directory is still made here
    # unless the user named one (DESIGN.md, "Deviations from the library's ordinary path").
    def self.configure_library
      return if @configured

      @configured = true
      unless ENV["prometheus_multiproc_dir"]
        dir = File.join(ENV.fetch("TMPDIR", "/tmp"), "details-metrics-#{Process.pid}-#{SecureRandom.hex(4)}")
        Dir.mkdir(dir, 0o700)
        ENV["prometheus_multiproc_dir"] = dir
        at_exit { Dir.rmdir(dir) if Dir.exist?(dir) && Dir.empty?(dir) }
      end
      Prometheus::Client.configure { |config| config.value_class = Prometheus::Client::SimpleValue }
    end

    def initialize
      self.class.configure_library
      @registry = Prometheus::Client::Registry.new
      @requests = @registry.counter(:http_requests_total, REQUESTS_HELP)
      @duration = @registry.histogram(:http_request_duration_seconds, DURATION_HELP, {}, BUCKETS)
      @render_lock = Mutex.new
      @rendered_at = -Float::INFINITY
      @rendered = nil
    end

    def observe(method, route, status, seconds)
      labels = { method: method, route: route, status: status }
      @requests.increment(labels)
      @duration.observe(labels, seconds)
    end

    def content_type
      Prometheus::Client::Formats::Text::CONTENT_TYPE
    end

    # The text, rendered at most MAX_RENDER_AGE_SECONDS ago: one render at a time, the scrapes that
    # arrive meanwhile wait for it and every answer shares its frozen String.
    def render
      @render_lock.synchronize do
        began = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        if began - @rendered_at >= MAX_RENDER_AGE_SECONDS
          @rendered = render_now.freeze
          @rendered_at = began
        end
        @rendered
      end
    end

    private

    # Text format 0.0.4: Formats::Text.marshal fails on histograms in 0.16.2 (DESIGN.md), so the samples
    # are listed here and MetricsRepresentation.to_text writes the text.
    def render_now
      families = @registry.metrics.map do |metric|
        samples = metric.values.flat_map { |labels, value| samples_of(metric, labels, value) }
        [metric.name, { type: metric.type, help: metric.docstring, samples: samples }]
      end
      Prometheus::Client::Helper::MetricsRepresentation.to_text(families)
    end

    def samples_of(metric, labels, value)
      return [[metric.name, labels, value.get]] unless metric.type == :histogram

      bucket = "#{metric.name}_bucket"
      value.map { |le, count| [bucket, labels.merge(le: le), count.get] } + [
        [bucket, labels.merge(le: "+Inf"), value.total.get],
        ["#{metric.name}_sum", labels, value.sum.get],
        ["#{metric.name}_count", labels, value.total.get]
      ]
    end
  end
end
