# frozen_string_literal: true

require_relative "test_helper"

# HTTP_NODELAY: WEBrick writes head and body in two calls; with Nagle on, the
# body waits for the client's delayed ACK of the head (about 40 ms on Linux).
# With the knob on, each response leaves in one write.
class NodelayTest < DetailsTest
  # Records each write call a response makes on its socket.
  class RecordingSocket
    attr_reader :writes

    def initialize
      @writes = []
    end

    def write(*strings)
      @writes << strings.join
      strings.sum(&:bytesize)
    end

    def <<(string)
      write(string)
      self
    end
  end

  def writes_of_one_response(env, method: "GET")
    server = start_server(env)
    res = Details::JsonErrorResponse.new(server.config)
    req = WEBrick::HTTPRequest.new(server.config)
    req.parse(StringIO.new("#{method} /details/1 HTTP/1.1\r\nHost: x\r\n\r\n"))
    res.request_method = req.request_method
    res.request_uri = req.request_uri
    res.request_http_version = req.http_version
    res.keep_alive = true
    res.status = 200
    res.content_type = "application/json"
    res.body = "{\"id\":1}"
    sock = RecordingSocket.new
    res.send_response(sock)
    sock.writes
  end

  def test_tuned_responses_leave_in_one_write
    writes = writes_of_one_response({})
    assert_equal 1, writes.size
    assert_match(/\AHTTP\/1.1 200 OK\r\n.*\r\n\r\n\{"id":1\}\z/m, writes.first)
    assert_equal 1, writes_of_one_response({}, method: "HEAD").size
  end

  def test_nodelay_false_keeps_the_two_writes_nagle_stalls_on
    writes = writes_of_one_response({ "HTTP_NODELAY" => "false" })
    assert_equal 2, writes.size
    assert writes.first.end_with?("\r\n\r\n")
    assert_equal "{\"id\":1}", writes.last
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
