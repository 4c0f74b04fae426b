# frozen_string_literal: true

# Shared test plumbing: a real server on an ephemeral loopback port (in this
# process, or as a child started through ./serve), and a raw HTTP/1.1 client
# that checks framing instead of trusting a library to paper over it.

require "minitest/autorun"
require "socket"
require "stringio"
require "timeout"

APP_DIR = File.expand_path("..", __dir__)
$LOAD_PATH.unshift(File.join(APP_DIR, "lib"))
require "details/config"
require "details/log"
require "details/server"

# Base class of every test here.
class DetailsTest < Minitest::Test
  # A parsed response. headers has lower-case names.
  Response = Struct.new(:status, :headers, :body, :raw_head)

  # Raised when a response has neither Content-Length nor chunked encoding.
  class Unframed < StandardError; end

  # An in-process server; env is what the environment would hold.
  def start_server(env = {}, access_log_io = StringIO.new)
    settings = Details::Config.from_env({ "LISTEN_ADDRESS" => "127.0.0.1" }.merge(env))
    settings.port = 0
    logger = Details::WebrickLog.new("error", StringIO.new)
    server = Details::Server.new(settings, logger: logger, access_log_io: access_log_io)
    thread = Thread.new { server.start }
    Thread.pass until server.status == :Running
    (@servers ||= []) << [server, thread]
    server
  end

  def teardown
    (@servers || []).each do |server, thread|
      server.shutdown
      thread.join(5)
    end
    (@children || []).each do |pid|
      Process.kill("KILL", pid)
      Process.wait(pid)
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    end
    super
  end

  def connect(port)
    TCPSocket.new("127.0.0.1", port)
  end

  def request_text(method, path, headers = {})
    lines = ["#{method} #{path} HTTP/1.1", "Host: 127.0.0.1"]
    headers.each { |k, v| lines << "#{k}: #{v}" }
    "#{lines.join("\r\n")}\r\n\r\n"
  end

  # One request on a fresh connection (or on sock when given).
  def http(port, method, path, headers = {}, sock: nil)
    own = sock.nil?
    sock ||= connect(port)
    sock.write(request_text(method, path, headers))
    read_response(sock, head: method == "HEAD")
  ensure
    sock.close if own && sock
  end

  # Reads exactly one response, using only its own framing.
  def read_response(sock, head: false, timeout: 5)
    raw = +""
    raw << read_some(sock, timeout) until raw.include?("\r\n\r\n")
    raw_head, rest = raw.split("\r\n\r\n", 2)
    status_line, *header_lines = raw_head.split("\r\n")
    headers = header_lines.to_h do |line|
      name, value = line.split(":", 2)
      [name.downcase, value.strip]
    end
    body = head ? +"" : read_body(sock, headers, rest, timeout)
    Response.new(Integer(status_line[%r{\AHTTP/1\.[01] (\d{3})}, 1]), headers, body, raw_head)
  end

  # True when the peer closes the connection within timeout.
  def closed_by_peer?(sock, timeout: 2)
    return false unless sock.wait_readable(timeout)

    sock.read_nonblock(1, exception: false).nil?
  rescue Errno::ECONNRESET
    true
  end

  # Retries the block until it returns truthy or `limit` seconds pass: the
  # server records a request (metrics, access log) just after writing its
  # response, so the client can see the response first.
  def eventually(limit = 2)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + limit
    until (result = yield)
      return result if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.01
    end
    result
  end

  def free_port
    server = TCPServer.new("127.0.0.1", 0)
    server.addr[1]
  ensure
    server&.close
  end

  # Starts ./serve as a child from another directory; returns [pid, port,
  # stdout reader, stderr reader]. Waits until /health answers.
  def spawn_serve(env = {})
    port = free_port
    out_r, out_w = IO.pipe
    err_r, err_w = IO.pipe
    pid = Process.spawn(
      { "PORT" => port.to_s, "LISTEN_ADDRESS" => "127.0.0.1" }.merge(env),
      File.join(APP_DIR, "serve"),
      chdir: Dir.tmpdir, out: out_w, err: err_w, pgroup: true
    )
    out_w.close
    err_w.close
    (@children ||= []) << pid
    wait_until_listening(port, pid)
    [pid, port, out_r, err_r]
  end

  # Runs ./serve to completion (for configurations that must not start).
  def run_serve(env)
    out, err, status = nil
    IO.pipe do |err_r, err_w|
      IO.pipe do |out_r, out_w|
        pid = Process.spawn({ "LISTEN_ADDRESS" => "127.0.0.1", "PORT" => free_port.to_s }.merge(env),
                            File.join(APP_DIR, "serve"), out: out_w, err: err_w)
        out_w.close
        err_w.close
        _, status = Timeout.timeout(20) { Process.wait2(pid) }
        out = out_r.read
        err = err_r.read
      end
    end
    [status, out, err]
  end

  # Waits for the child to exit; returns [status, seconds waited] or fails.
  def wait_exit(pid, limit)
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    _, status = Timeout.timeout(limit) { Process.wait2(pid) }
    @children.delete(pid)
    [status, Process.clock_gettime(Process::CLOCK_MONOTONIC) - started]
  rescue Timeout::Error
    flunk "process #{pid} still running after #{limit} s"
  end

  private

  def read_some(sock, timeout)
    raise Timeout::Error, "no data within #{timeout} s" unless sock.wait_readable(timeout)

    sock.readpartial(65_536)
  end

  def read_body(sock, headers, rest, timeout)
    if (length = headers["content-length"])
      rest << read_some(sock, timeout) while rest.bytesize < Integer(length)
      raise "body longer than Content-Length" if rest.bytesize > Integer(length)

      rest
    elsif headers["transfer-encoding"] == "chunked"
      rest << read_some(sock, timeout) until rest.include?("0\r\n\r\n")
      decode_chunked(rest)
    else
      raise Unframed, "response has neither Content-Length nor chunked encoding"
    end
  end

  def decode_chunked(data)
    body = +""
    until data.empty?
      size_line, data = data.split("\r\n", 2)
      size = size_line.to_i(16)
      break if size.zero?

      body << data.byteslice(0, size)
      data = data.byteslice(size + 2..)
    end
    body
  end

  def wait_until_listening(port, pid)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 20
    loop do
      flunk "serve exited before listening" if Process.wait(pid, Process::WNOHANG)
      begin
        return http(port, "GET", "/health")
      rescue Errno::ECONNREFUSED
        raise if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

        sleep 0.05
      end
    end
  end
end
