# frozen_string_literal: true

module Details
  # Request count and duration histogram by method, route and status, in the
  # Prometheus text format 0.0.4. One mutex-guarded hash: an observation costs
  # a lookup and two increments, cheap next to WEBrick's own per-request work.
  class Metrics
    BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10].freeze
    CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

    # One (method, route, status) combination.
    Series = Struct.new(:count, :sum, :buckets)

    def initialize
      @mutex = Mutex.new
      @series = {}
    end

    def observe(method, route, status, seconds)
      key = "method=\"#{method}\",route=\"#{route}\",status=\"#{status}\""
      index = BUCKETS.bsearch_index { |le| seconds <= le } || BUCKETS.size
      @mutex.synchronize do
        s = (@series[key] ||= Series.new(0, 0.0, Array.new(BUCKETS.size + 1, 0)))
        s.count += 1
        s.sum += seconds
        s.buckets[index] += 1
      end
    end

    def render
      snapshot = @mutex.synchronize { @series.map { |k, s| [k, s.count, s.sum, s.buckets.dup] } }
      snapshot.sort_by!(&:first)
      out = +""
      out << "# HELP http_requests_total HTTP requests served, by method, route and status.\n"
      out << "# TYPE http_requests_total counter\n"
      snapshot.each { |labels, count, _, _| out << "http_requests_total{#{labels}} #{count}\n" }
      out << "# HELP http_request_duration_seconds Time from reading the request line to writing the response.\n"
      out << "# TYPE http_request_duration_seconds histogram\n"
      snapshot.each { |labels, count, sum, buckets| render_histogram(out, labels, count, sum, buckets) }
      out
    end

    private

    def render_histogram(out, labels, count, sum, buckets)
      cumulative = 0
      BUCKETS.each_with_index do |le, i|
        cumulative += buckets[i]
        out << "http_request_duration_seconds_bucket{#{labels},le=\"#{le}\"} #{cumulative}\n"
      end
      out << "http_request_duration_seconds_bucket{#{labels},le=\"+Inf\"} #{count}\n"
      out << "http_request_duration_seconds_sum{#{labels}} #{sum}\n"
      out << "http_request_duration_seconds_count{#{labels}} #{count}\n"
    end
  end
end
