# frozen_string_literal: true

require_relative "test_helper"

# HTTP_KEEPALIVE, HTTP_KEEPALIVE_TIMEOUT_SECONDS and framing: fortio's client
# waits out its timeout on a response that is only ended by a close.
class KeepaliveTest < DetailsTest
  # Requests WEBrick itself answers before any route runs, with their status
  # (a head over 112 KiB is WEBrick's 413).
  MALFORMED = {
    "garbage\r\n\r\n" => 400,
    "GET /#{'a' * 3000} HTTP/1.1\r\n\r\n" => 414,
    "GET /health HTTP/1.1\r\n#{"X: #{'a' * 1000}\r\n" * 120}\r\n" => 413,
    "GET /../etc HTTP/1.1\r\n\r\n" => 400,
    "GET /details/%zz HTTP/1.1\r\n\r\n" => 400
  }.freeze

  def test_keepalive_on_serves_two_requests_on_one_socket
    port = start_server("HTTP_KEEPALIVE" => "true").port
    sock = connect(port)
    first = http(port, "GET", "/details/1", sock: sock)
    assert_equal "Keep-Alive", first.headers["connection"]
    second = http(port, "GET", "/details/2", sock: sock)
    assert_equal 200, second.status
    assert_includes second.body, '"id":2,'
    refute closed_by_peer?(sock, timeout: 0.2)
  ensure
    sock&.close
  end

  def test_keepalive_off_sends_connection_close_frames_and_closes
    port = start_server("HTTP_KEEPALIVE" => "false").port
    [%w[GET /details/1], %w[GET /details/x], %w[GET /health], %w[GET /metrics], %w[GET /nope],
     %w[POST /details/1], %w[HEAD /details/1]].each do |method, path|
      sock = connect(port)
      res = http(port, method, path, sock: sock)
      assert_equal "close", res.headers["connection"], "#{method} #{path}"
      assert res.headers["content-length"], "#{method} #{path} must carry Content-Length"
      assert closed_by_peer?(sock), "#{method} #{path}: server kept the connection open"
    ensure
      sock&.close
    end
  end

  def test_keepalive_off_closes_even_when_the_client_asks_to_keep_alive
    port = start_server("HTTP_KEEPALIVE" => "false").port
    sock = connect(port)
    res = http(port, "GET", "/details/1", { "Connection" => "keep-alive" }, sock: sock)
    assert_equal "close", res.headers["connection"]
    assert closed_by_peer?(sock)
  ensure
    sock&.close
  end

  def test_requests_webrick_answers_itself_are_framed_json_and_closed
    %w[true false].each do |keepalive|
      port = start_server("HTTP_KEEPALIVE" => keepalive).port
      MALFORMED.each do |raw, status|
        sock = connect(port)
        sock.write(raw)
        res = read_response(sock)
        label = "#{raw[0, 30].inspect} keepalive=#{keepalive}"
        assert_equal status, res.status, label
        assert_equal "application/json", res.headers["content-type"], label
        assert_match(/\A\{"error":"[a-z -]+"\}\z/, res.body, label)
        assert closed_by_peer?(sock), label
      ensure
        sock&.close
      end
    end
  end

  # WEBrick answers the server-wide "OPTIONS *" itself, and closes after it;
  # the Allow header names what the routes serve.
  def test_options_star_is_answered_framed
    port = start_server.port
    sock = connect(port)
    sock.write("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
    res = read_response(sock)
    assert_equal [200, "GET, HEAD", "0", "close"],
                 [res.status, res.headers["allow"], res.headers["content-length"], res.headers["connection"]]
    assert closed_by_peer?(sock)
  ensure
    sock&.close
  end

  def test_idle_keepalive_connection_is_closed_after_the_timeout
    port = start_server("HTTP_KEEPALIVE_TIMEOUT_SECONDS" => "1").port
    sock = connect(port)
    assert_equal 200, http(port, "GET", "/health", sock: sock).status
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    refute closed_by_peer?(sock, timeout: 0.5), "closed before the idle timeout"
    assert closed_by_peer?(sock, timeout: 2), "still open 2.5 s after a 1 s idle timeout"
    assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :>=, 0.9
  ensure
    sock&.close
  end
end
