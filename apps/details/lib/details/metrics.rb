# frozen_string_literal: true

require "prometheus/client"
require "prometheus/client/formats/text"
require "securerandom"

module Details
  # The two catalogue metrics (docs/configuration.md), kept by the Prometheus
  # client library (Debian's ruby-prometheus-client-mmap, the
  # Prometheus::Client API): a registry of its own per server, a counter and
  # a histogram labelled method, route and status.
  class Metrics
    BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].freeze
    REQUESTS_HELP = "HTTP requests served, by method, route pattern and status."
    DURATION_HELP = "Time to serve an HTTP request, by method, route pattern and status."

    # One process serves every request, so values stay in memory
    # (SimpleValue) instead of the library's default per-process mmap files,
    # which exist to add up forked workers: 4 us per request instead of 12,
    # and one server's values are its own (the mmap store is per process, so
    # two registries in one process would share them).
    def self.configure_library
      return if @configured

      @configured = true
      files_dir_for_library
      Prometheus::Client.configure do |config|
        config.value_class = Prometheus::Client::SimpleValue
      end
    end

    # Building the library's configuration makes the directory for those
    # files, unused here: prometheus_multiproc_dir, else Dir.mktmpdir. Ruby's
    # Dir.tmpdir refuses a world-writable directory without the sticky bit,
    # which is what a Kubernetes emptyDir at /tmp is (mode 0777), and the
    # service would not start. So, unless the user named the directory, it
    # is made here: private (0700), under TMPDIR or /tmp, removed at exit.
    def self.files_dir_for_library
      return if ENV["prometheus_multiproc_dir"]

      dir = File.join(ENV.fetch("TMPDIR", "/tmp"), "details-metrics-#{Process.pid}-#{SecureRandom.hex(4)}")
      Dir.mkdir(dir, 0o700)
      ENV["prometheus_multiproc_dir"] = dir
      at_exit { Dir.rmdir(dir) if Dir.exist?(dir) && Dir.empty?(dir) }
    end

    attr_reader :registry

    def initialize
      self.class.configure_library
      @registry = Prometheus::Client::Registry.new
      @requests = @registry.counter(:http_requests_total, REQUESTS_HELP)
      @duration = @registry.histogram(:http_request_duration_seconds, DURATION_HELP, {}, BUCKETS)
    end

    def observe(method, route, status, seconds)
      labels = { method: method, route: route, status: status }
      @requests.increment(labels)
      @duration.observe(labels, seconds)
    end

    def content_type
      Prometheus::Client::Formats::Text::CONTENT_TYPE
    end

    # The text format 0.0.4. Formats::Text.marshal(registry) is the
    # library's way, but in 0.16.2 it raises NoMethodError on any histogram
    # (it asks the bucket Hash for .total) and names bucket lines without
    # "_bucket"; its multi-process renderer writes the fixed HELP
    # "Multiprocess metric" and sorts buckets as strings (10 before 2.5).
    # So the samples are listed here as the exposition format names them,
    # and the library's MetricsRepresentation.to_text (where marshal ends)
    # writes the text: escaping, HELP and TYPE lines, number format.
    def render
      families = @registry.metrics.map do |metric|
        samples = metric.values.flat_map { |labels, value| samples_of(metric, labels, value) }
        [metric.name, { type: metric.type, help: metric.docstring, samples: samples }]
      end
      Prometheus::Client::Helper::MetricsRepresentation.to_text(families)
    end

    private

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
