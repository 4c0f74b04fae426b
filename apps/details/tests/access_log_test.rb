# frozen_string_literal: true

require_relative "test_helper"

class AccessLogTest < DetailsTest
  LINE = /\A\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z details (\S+) (\S+) (\d{3}) (\d+\.\d{3})\z/

  def test_one_line_per_request_when_on
    log = StringIO.new
    port = start_server({ "ACCESS_LOG" => "true" }, log).port
    http(port, "GET", "/details/1?u=normal")
    http(port, "POST", "/health")
    http(port, "GET", "/nope")
    eventually { log.string.lines.size >= 3 }
    lines = log.string.lines(chomp: true)
    assert_equal 3, lines.size, log.string
    # Each line is written after its response, so their order may differ.
    got = lines.map { |l| LINE.match(l)&.captures&.first(3) || l }.sort_by(&:to_s)
    assert_equal [["GET", "/details/1", "200"], ["GET", "/nope", "404"], ["POST", "/health", "405"]], got
  end

  def test_nothing_is_logged_by_default
    log = StringIO.new
    port = start_server({}, log).port
    http(port, "GET", "/details/1")
    assert_equal "", log.string
  end
end
