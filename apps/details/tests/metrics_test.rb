# frozen_string_literal: true

require_relative "test_helper"

class MetricsTest < DetailsTest
  LE = %w[0.0005 0.001 0.0025 0.005 0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 +Inf].freeze

  def test_histogram_buckets_are_cumulative_and_end_with_the_count
    m = Details::Metrics.new
    [0.0004, 0.0005, 0.003, 0.2, 11].each { |s| m.observe("GET", "/details/:id", 200, s) }
    text = m.render
    labels = 'method="GET",route="/details/:id",status="200"'
    got = LE.map do |le|
      line = /^http_request_duration_seconds_bucket\{#{Regexp.escape(labels)},le="#{Regexp.escape(le)}"\} (\S+)$/
      Float(text[line, 1])
    end
    assert_equal [2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5], got
    assert_equal 5, sample(text, "http_requests_total{#{labels}}")
    assert_equal 5, sample(text, "http_request_duration_seconds_count{#{labels}}")
    sum = Float(text[/^http_request_duration_seconds_sum\{#{Regexp.escape(labels)}\} (\S+)$/, 1])
    assert_in_delta 11.2039, sum, 1e-9
  end

  def test_metrics_endpoint_counts_requests_by_method_route_and_status
    port = start_server.port
    2.times { http(port, "GET", "/details/1") }
    http(port, "GET", "/details/abc")
    http(port, "HEAD", "/health")
    http(port, "DELETE", "/health")
    http(port, "GET", "/random/#{rand(1 << 30)}")
    http(port, "GET", "/other/#{rand(1 << 30)}")
    sock = connect(port)
    sock.write("GET /#{'a' * 3000} HTTP/1.1\r\n\r\n")
    read_response(sock)
    sock.close

    res = eventually do
      scrape = http(port, "GET", "/metrics")
      scrape if scrape.body.include?('route="unmatched",status="414"')
    end
    assert_equal 200, res.status
    assert_equal "text/plain; version=0.0.4", res.headers["content-type"]
    text = res.body
    {
      'method="GET",route="/details/:id",status="200"' => 2,
      'method="GET",route="/details/:id",status="400"' => 1,
      'method="HEAD",route="/health",status="200"' => 1,
      'method="DELETE",route="/health",status="405"' => 1,
      'method="GET",route="unmatched",status="404"' => 2,
      'method="OTHER",route="unmatched",status="414"' => 1
    }.each do |labels, count|
      assert_equal count, sample(text, "http_requests_total{#{labels}}"), labels
      assert_equal count, sample(text, "http_request_duration_seconds_count{#{labels}}"), labels
      assert_equal count, sample(text, "http_request_duration_seconds_bucket{#{labels},le=\"+Inf\"}"), labels
    end
    assert_includes text, "# HELP http_requests_total HTTP requests served, by method, route pattern and status.\n" \
                          "# TYPE http_requests_total counter\n"
    assert_includes text, "# HELP http_request_duration_seconds Time to serve an HTTP request, " \
                          "by method, route pattern and status.\n# TYPE http_request_duration_seconds histogram\n"
    refute_includes text, "/random/", "404 paths must not become label values"
  end

  # Buckets in increasing order of le, +Inf last, and no label beyond the
  # catalogue's three (and le on buckets).
  def test_exposition_follows_the_text_format
    m = Details::Metrics.new
    m.observe("GET", "/health", 200, 0.002)
    m.observe("OTHER", "unmatched", 400, 0.0001)
    text = m.render
    %w[/health unmatched].each do |route|
      bucket = /^http_request_duration_seconds_bucket\{[^}]*route="#{Regexp.escape(route)}"[^}]*le="([^"]+)"\}/
      les = text.scan(bucket).flatten
      assert_equal LE, les, route
    end
    text.scan(/^(http_\w+)\{([^}]*)\}/).each do |name, labels|
      keys = labels.scan(/(\w+)="/).flatten
      want = name.end_with?("_bucket") ? %w[method route status le] : %w[method route status]
      assert_equal want, keys, name
    end
  end

  def test_scrapes_within_the_max_age_share_one_render
    m = Details::Metrics.new
    first = m.render
    m.observe("GET", "/health", 200, 0.001)
    assert_same first, m.render, "a scrape within the max age rendered anew"
    sleep Details::Metrics::MAX_RENDER_AGE_SECONDS
    assert_equal 1, sample(m.render, 'http_requests_total{method="GET",route="/health",status="200"}')
  end

  # Scrapes that arrive while a render runs wait for it and get its String.
  def test_one_render_at_a_time
    m = Details::Metrics.new
    renders = 0
    gate = Queue.new
    m.define_singleton_method(:render_now) do
      renders += 1
      gate.pop
      +"rendered"
    end
    threads = Array.new(8) { Thread.new { m.render } }
    sleep 0.2
    gate << :go
    bodies = threads.map(&:value)
    assert_equal 1, renders
    assert(bodies.all? { |b| b.equal?(bodies.first) })
  end

  private

  # The value of the sample line starting with series, as a number.
  def sample(text, series)
    value = text[/^#{Regexp.escape(series)} (\S+)$/, 1]
    value && Float(value)
  end
end
