# frozen_string_literal: true

require_relative "test_helper"

# Raw exchanges for the tests below.
module RawExchange
  STATUS_LINE = %r{HTTP/1\.[01] (\d{3}) }

  # Writes raw on a new connection and reads until the server closes it or
  # `limit` seconds pass. Returns [statuses of the responses seen, whether
  # the server closed, seconds until it closed or the limit].
  def exchange(raw, limit: 3, port: @port, close_write: false)
    sock = connect(port)
    started = now
    sock.write(raw)
    sock.close_write if close_write
    data, closed = read_until_closed(sock, started + limit)
    [data.scan(STATUS_LINE).flatten.map(&:to_i), closed, now - started, data]
  ensure
    sock&.close
  end

  def read_until_closed(sock, deadline)
    data = +""
    loop do
      left = deadline - now
      return [data, false] unless left.positive? && sock.wait_readable(left)

      chunk = sock.read_nonblock(65_536, exception: false)
      return [data, true] if chunk.nil?

      data << chunk unless chunk == :wait_readable
    end
  rescue Errno::ECONNRESET
    [data, true]
  end

  def now
    Process.clock_gettime(Process::CLOCK_MONOTONIC)
  end

  def assert_rejected(raw, status = 400, label = raw[0, 120].inspect, within: 1.0)
    statuses, closed, seconds, data = exchange(raw)
    assert_equal [status], statuses, label
    assert closed, "#{label}: connection left open"
    assert_operator seconds, :<, within, label
    assert_includes data, "Connection: close", label
    assert_match(/\{"error":"[a-z -]+"\}\z/, data, label)
  end

  def head(lines)
    "#{lines.join("\r\n")}\r\n\r\n"
  end
end

# StrictReader's own limits and grammar on raw sockets; what every service
# must refuse is tested across all four in tests/e2e.
class HostileTest < DetailsTest
  include RawExchange

  def setup
    @port = start_server.port
  end

  # A field line must end within WEBrick's 4096-byte read: 4094 bytes and
  # CRLF fill it exactly; one byte more is 431.
  def test_the_longest_accepted_header_line_is_served
    assert_equal 200, http(@port, "GET", "/health", { "X" => "a" * 4091 }).status
    assert_rejected(head(["GET /health HTTP/1.1", "Host: x", "X: #{'a' * 4092}"]), 431, "4095-byte line")
  end

  def test_htab_and_obs_text_in_a_field_are_served
    statuses, = exchange(head(["GET /health HTTP/1.1", "Host: x", "X: a\tb \xff", "Connection: close"]))
    assert_equal [200], statuses, "HTAB and obs-text are allowed"
  end

  def test_malformed_request_lines_are_400_within_a_second
    ["GET  /health HTTP/1.1", "GET /health  HTTP/1.1", "GET\t/health HTTP/1.1", "GET /health HTTP/1.1 ",
     "GET /he\x00alth HTTP/1.1", "GET /health HTTP/1.1\rX", "\x00GET /health HTTP/1.1"].each do |line|
      assert_rejected("#{line}\r\nHost: x\r\n\r\n", 400, line.inspect)
    end
    assert_rejected("GET /health HTTP/1.1\n", 400, "bare LF, nothing after")
  end
end

# The head deadlines of the accept hook and StrictReader, and TCP_USER_TIMEOUT.
class SlowClientTest < DetailsTest
  include RawExchange

  def setup
    @port = start_server("HTTP_HEADER_TIMEOUT_SECONDS" => "1").port
  end

  # The first head is due a header timeout after the accept, not after its
  # first byte.
  def test_the_first_head_counts_from_the_accept
    sock = connect(@port)
    started = now
    sleep 0.7
    sock.write("GET /health HTTP/1.1\r\n")
    sleep 0.6
    begin
      sock.write("Host: x\r\n\r\n")
    rescue Errno::EPIPE, Errno::ECONNRESET
      nil
    end
    data, closed = read_until_closed(sock, started + 4)
    assert closed
    assert_includes [[], [408]], data.scan(STATUS_LINE).flatten.map(&:to_i)
  ensure
    sock&.close
  end

  # Idle keep-alive stays under HTTP_KEEPALIVE_TIMEOUT_SECONDS; each later
  # head has its own deadline from its first byte.
  def test_keepalive_idle_time_is_not_head_time
    sock = connect(@port)
    assert_equal 200, http(@port, "GET", "/health", sock: sock).status
    sleep 1.5
    sock.write("GET /health HTTP/1.1\r\n")
    sleep 0.5
    sock.write("Host: x\r\n\r\n")
    assert_equal 200, read_response(sock).status
  ensure
    sock&.close
  end

  # What the kernel holds for a client that does not read is bounded by the send buffer the accept sets, not
  # autotuned to megabytes: 200 such clients otherwise kept 200 threads writing answers (DESIGN.md, "A crowd of
  # scrapes"). The server side's send queue is read from /proc/net/tcp.
  def test_unread_answers_queued_in_the_kernel_are_bounded
    skip "needs /proc/net/tcp" unless File.readable?("/proc/net/tcp")
    port = start_server.port
    sock = connect(port)
    writer = Thread.new do
      sock.write(request_text("GET", "/metrics") * 2000)
    rescue SystemCallError, IOError
      nil
    end
    sleep 1.5
    queued = server_send_queue(port, sock.local_address.ip_port)
    refute_nil queued, "the server side of the connection is not in /proc/net/tcp"
    assert_operator queued, :<=, (2 * Details::Serving::Wire::SEND_BUFFER_BYTES) + (64 * 1024)
  ensure
    writer&.kill
    sock&.close
  end

  # WEBrick writes a response with no time limit; a client that never
  # reads would hold its thread for ever. TCP_USER_TIMEOUT (the keep-alive
  # timeout) makes the kernel drop the connection instead.
  def test_a_client_that_never_reads_is_dropped
    port = start_server("HTTP_KEEPALIVE_TIMEOUT_SECONDS" => "1").port
    sock = connect(port)
    sock.setsockopt(Socket::SOL_SOCKET, Socket::SO_RCVBUF, 4096)
    writer = Thread.new do
      sock.write(request_text("GET", "/metrics") * 2000)
    rescue SystemCallError, IOError
      nil
    end
    sleep 4
    data, closed = read_until_closed(sock, now + 5)
    assert closed, "the server still writes to a client that stopped reading"
    assert_operator data.scan(STATUS_LINE).size, :<, 2000
  ensure
    writer&.kill
    sock&.close
  end

  private

  # Bytes the server has queued to send to client_port, on its side of the connection (tx_queue).
  def server_send_queue(port, client_port)
    File.readlines("/proc/net/tcp").drop(1).each do |line|
      fields = line.split
      local = fields[1].split(":").last.to_i(16)
      remote = fields[2].split(":").last.to_i(16)
      return fields[4].split(":").first.to_i(16) if local == port && remote == client_port
    end
    nil
  end
end
