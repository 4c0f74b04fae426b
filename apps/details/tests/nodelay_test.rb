# frozen_string_literal: true

require_relative "test_helper"

# HTTP_NODELAY: WEBrick writes head and body in two calls; with Nagle on, the
# body waits for the client's delayed ACK of the head (about 40 ms on Linux).
# The knob sets TCP_NODELAY, so the body leaves at once; still two writes.
class NodelayTest < DetailsTest
  # tcpi_data_segs_in of struct tcp_info (Linux): TCP segments with data
  # this socket has received.
  def data_segs_in(sock)
    sock.getsockopt(Socket::IPPROTO_TCP, Socket::TCP_INFO).data.unpack1("@152L")
  end

  # Data segments the client receives for each of `count` responses on one
  # kept-alive connection. On loopback each write of the server is one
  # segment, so this counts WEBrick's writes per response.
  def segments_per_response(port, method, path, count: 5)
    sock = connect(port)
    Array.new(count) do
      before = data_segs_in(sock)
      res = http(port, method, path, sock: sock)
      assert_equal "Keep-Alive", res.headers["connection"]
      data_segs_in(sock) - before
    end
  ensure
    sock&.close
  end

  # WEBrick writes the head, then the body: two writes per response, with
  # or without TCP_NODELAY; a HEAD response is the head alone.
  def test_responses_take_two_writes_head_then_body
    %w[true false].each do |nodelay|
      port = start_server("HTTP_NODELAY" => nodelay).port
      %w[/health /details/0].each do |path|
        assert_equal [2] * 5, segments_per_response(port, "GET", path), "GET #{path} HTTP_NODELAY=#{nodelay}"
      end
      assert_equal [1] * 5, segments_per_response(port, "HEAD", "/details/0"), "HEAD HTTP_NODELAY=#{nodelay}"
    end
  end

  def nodelay?(sock)
    sock.getsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY).int != 0
  end

  # The accept hook, applied by the server to a real accepted socket.
  def accepted_socket_nodelay(env)
    server = Details::Server.new(
      Details::Config.from_env(env.merge("LISTEN_ADDRESS" => "127.0.0.1")).tap { |c| c.port = 0 },
      logger: Details::WebrickLog.new("error", StringIO.new)
    )
    client = connect(server.port)
    accepted = server.listeners.first.accept
    server.config[:AcceptCallback]&.call(accepted)
    nodelay?(accepted)
  ensure
    [client, accepted].compact.each(&:close)
    server&.listeners&.each(&:close)
  end

  def test_accepted_sockets_get_tcp_nodelay_by_default
    assert accepted_socket_nodelay({})
    assert accepted_socket_nodelay("HTTP_NODELAY" => "true")
  end

  def test_nodelay_false_leaves_nagle_on
    refute accepted_socket_nodelay("HTTP_NODELAY" => "false")
  end

  # Median latency of back-to-back requests on one kept-alive connection.
  def median_ms(port, count)
    sock = connect(port)
    times = Array.new(count) do
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      assert_equal 200, http(port, "GET", "/details/1", sock: sock).status
      (Process.clock_gettime(Process::CLOCK_MONOTONIC) - started) * 1000
    end
    times.sort[count / 2]
  ensure
    sock&.close
  end

  def test_the_knob_removes_the_delayed_ack_stall
    with = median_ms(start_server("HTTP_NODELAY" => "true").port, 15)
    without = median_ms(start_server("HTTP_NODELAY" => "false").port, 9)
    assert_operator with, :<, 15, "HTTP_NODELAY=true: median #{with.round(2)} ms"
    assert_operator without, :>, 25, "HTTP_NODELAY=false: median #{without.round(2)} ms, expected the ~40 ms stall"
  end
end
