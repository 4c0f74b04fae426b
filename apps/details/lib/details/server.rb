# frozen_string_literal: true

require "socket"
require "time"
require "webrick"
require_relative "json_error_response"
require_relative "metrics"
require_relative "servlets"
require_relative "strict_request"

module Details
  # WEBrick's HTTPServer with the servlets mounted and the common HTTP knobs
  # set through its configuration keys and its documented overridable
  # methods (service, create_request, create_response, access_log,
  # do_OPTIONS).
  class Server < WEBrick::HTTPServer
    # Details serves no route that takes a body; a body is read (and
    # dropped) only to keep the connection usable, up to this size.
    MAX_BODY_BYTES = 1024 * 1024

    STANDARD_METHODS = %w[GET HEAD POST PUT DELETE PATCH OPTIONS TRACE CONNECT].freeze
    HTTP_1_0 = WEBrick::HTTPVersion.new("1.0")

    attr_reader :metrics

    # settings: a Details::Config. access_log_io receives the access log when
    # settings.access_log is on.
    def initialize(settings, logger:, access_log_io: $stdout)
      @keepalive = settings.keepalive
      @server_timing = settings.server_timing
      @access_log_io = settings.access_log ? access_log_io : nil
      @metrics = Metrics.new
      @header_timeout = settings.header_timeout
      # TCP_USER_TIMEOUT in ms: Linux; elsewhere the option is left alone.
      @user_timeout_ms = settings.keepalive_timeout * 1000 if Socket.const_defined?(:TCP_USER_TIMEOUT)
      @limits = RequestLimits.new(
        header_timeout: settings.header_timeout,
        body_timeout: settings.keepalive_timeout,
        max_body_bytes: MAX_BODY_BYTES
      )
      nodelay = settings.nodelay ? 1 : 0
      super(
        BindAddress: settings.listen_address,
        Port: settings.port,
        Logger: logger,
        # WEBrick's own access log is off; ours is written in #access_log.
        AccessLog: [],
        # How long WEBrick waits for the next request on a kept-alive
        # connection (polling every 0.5 s, so that a shutdown is noticed),
        # and for each line or body read of a request (408 after it);
        # StrictRequest adds the overall limits on top.
        RequestTimeout: settings.keepalive_timeout,
        # WEBrick runs a thread per connection; with all of them taken its
        # accept loop waits, and new connections wait in the listen backlog.
        MaxClients: settings.max_connections,
        DoNotReverseLookup: true,
        # Runs in the connection's thread on each accepted socket, before
        # the first request is read.
        AcceptCallback: ->(sock) { accepted(sock, nodelay) }
      )
      mount("/details", Servlets::Details)
      mount("/health", Servlets::Health)
      mount("/metrics", Servlets::Metrics, @metrics)
      mount("/", Servlets::NotFound)
    end

    def port
      config[:Port]
    end

    def service(req, res)
      # WEBrick answers an HTTP/0.9 request ("GET /path", no version) with a
      # bare body and no head, which no current client can frame; answer it
      # as HTTP/1.0 (head, Content-Length, Connection: close).
      res.request_http_version = HTTP_1_0 if req.http_version < HTTP_1_0
      read_body(req, res)
      # keep_alive false: WEBrick writes "Connection: close" (still with
      # Content-Length) and closes the connection after the response. During
      # a shutdown that tells the client the connection ends.
      res.keep_alive = false unless @keepalive && status == :Running
      timed(res) { super }
    end

    # The server-wide "OPTIONS *": WEBrick answers 200 with this Allow.
    def do_OPTIONS(_req, res)
      res["Allow"] = Servlets::ALLOW
    end

    # Every request is read through StrictRequest (strict framing, overall
    # deadlines); see lib/details/strict_request.rb.
    def create_request(webrick_config)
      StrictRequest.new(webrick_config, @limits)
    end

    def create_response(webrick_config)
      JsonErrorResponse.new(webrick_config)
    end

    # WEBrick calls this after writing every response, including the errors
    # it answers itself (route "unmatched" then).
    def access_log(_webrick_config, req, res)
      seconds = req.request_time ? Time.now - req.request_time : 0.0
      method = STANDARD_METHODS.include?(req.request_method) ? req.request_method : "OTHER"
      @metrics.observe(method, req.attributes[:route] || "unmatched", res.status, seconds)
      return unless @access_log_io

      # Escaped: method and path are whatever the client sent.
      path = WEBrick::AccessLog.escape(req.unparsed_uri.to_s.split("?", 2).first.to_s)
      path = "-" if path.empty?
      @access_log_io.write(
        format("%<time>s details %<method>s %<path>s %<status>d %<ms>.3f\n",
               time: Time.now.utc.iso8601(3), method: WEBrick::AccessLog.escape(req.request_method || "-"),
               path: path, status: res.status, ms: seconds * 1000)
      )
    end

    private

    # The W3C Server-Timing header (docs/contract.md, "Server-Timing"):
    # app;dur=<ms>, from the servlet being picked to the response being
    # complete (WEBrick writes it after #service returns). Details calls
    # nobody, so that is all it says. Also on the answer WEBrick makes from
    # an HTTPStatus error raised while serving (it keeps the headers set).
    def timed(res)
      return yield unless @server_timing

      start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      begin
        yield
      ensure
        ms = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - start) * 1000
        res["Server-Timing"] = format("app;dur=%.3f", ms)
      end
    end

    # The AcceptCallback. The first head of a connection must be complete
    # within the header timeout of the accept: StrictRequest reads that
    # deadline from this thread. WEBrick itself would wait for the first
    # byte as for a kept-alive connection (HTTP_KEEPALIVE_TIMEOUT_SECONDS),
    # so the wait for it happens here; with nothing by the deadline the read
    # side is shut down, WEBrick's request loop then sees end of file and
    # closes the connection without an answer.
    #
    # TCP_USER_TIMEOUT bounds the one wait WEBrick puts no limit on: writing
    # a response to a client that does not read (its window stays zero, the
    # write blocks). After HTTP_KEEPALIVE_TIMEOUT_SECONDS without progress
    # the kernel drops the connection and the write fails.
    def accepted(sock, nodelay)
      sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, nodelay)
      sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_USER_TIMEOUT, @user_timeout_ms) if @user_timeout_ms
      deadline = StrictReader.now + @header_timeout
      Thread.current[StrictRequest::FIRST_HEAD_DEADLINE] = deadline
      loop do
        left = deadline - StrictReader.now
        break unless left.positive?
        # In steps of at most 0.5 s, like WEBrick's wait between requests,
        # so that a shutdown closes a silent new connection at once.
        return if sock.wait_readable([left, 0.5].min) || status != :Running
      end
      sock.shutdown(Socket::SHUT_RD)
    rescue SystemCallError, IOError => e
      @logger.debug("accept: #{e.class}")
    end

    # Reads (and drops) the request body before the route answers. WEBrick
    # would read it only after the response is built and close the
    # connection if that failed, behind a response that announced
    # keep-alive. A POST or PUT without Content-Length or Transfer-Encoding
    # (WEBrick refuses to read it: 411) gets the route's answer with
    # "Connection: close"; a body that is malformed, too large or too slow
    # is answered by WEBrick with the error (400, 413, 408) and the
    # connection closed.
    def read_body(req, res)
      req.body { |_chunk| nil }
    rescue WEBrick::HTTPStatus::LengthRequired => e
      @logger.debug("request body: #{e.class}")
      res.keep_alive = false
    end
  end
end
