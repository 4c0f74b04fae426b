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
      line = /^http_request_duration_seconds_bucket\{#{Regexp.escape(labels)},le="#{Regexp.escape(le)}"\} (\d+)$/
      Integer(text[line, 1])
    end
    assert_equal [2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5], got
    assert_includes text, "http_requests_total{#{labels}} 5\n"
    assert_includes text, "http_request_duration_seconds_count{#{labels}} 5\n"
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
    assert_equal "text/plain; version=0.0.4; charset=utf-8", res.headers["content-type"]
    text = res.body
    {
      'method="GET",route="/details/:id",status="200"' => 2,
      'method="GET",route="/details/:id",status="400"' => 1,
      'method="HEAD",route="/health",status="200"' => 1,
      'method="DELETE",route="/health",status="405"' => 1,
      'method="GET",route="unmatched",status="404"' => 2,
      'method="OTHER",route="unmatched",status="414"' => 1
    }.each do |labels, count|
      assert_includes text, "http_requests_total{#{labels}} #{count}\n"
      assert_includes text, "http_request_duration_seconds_count{#{labels}} #{count}\n"
      assert_includes text, "http_request_duration_seconds_bucket{#{labels},le=\"+Inf\"} #{count}\n"
    end
    assert_includes text, "# TYPE http_requests_total counter\n"
    assert_includes text, "# TYPE http_request_duration_seconds histogram\n"
    refute_includes text, "/random/", "404 paths must not become label values"
  end
end
