# frozen_string_literal: true

require "socket"
require "time"
require "webrick"
require_relative "json_error_response"
require_relative "metrics"
require_relative "servlets"

module Details
  # WEBrick's HTTPServer with the servlets mounted and the common HTTP knobs
  # set through its configuration keys and its documented overridable
  # methods (service, create_response, access_log, do_OPTIONS).
  class Server < WEBrick::HTTPServer
    # WEBrick runs a thread per connection and stops accepting when they are
    # all taken; a benchmark may hold several hundred keep-alive connections.
    MAX_CLIENTS = 1024

    STANDARD_METHODS = %w[GET HEAD POST PUT DELETE PATCH OPTIONS TRACE CONNECT].freeze
    HTTP_1_0 = WEBrick::HTTPVersion.new("1.0")

    attr_reader :metrics

    # settings: a Details::Config. access_log_io receives the access log when
    # settings.access_log is on.
    def initialize(settings, logger:, access_log_io: $stdout)
      @keepalive = settings.keepalive
      @access_log_io = settings.access_log ? access_log_io : nil
      @metrics = Metrics.new
      nodelay = settings.nodelay ? 1 : 0
      super(
        BindAddress: settings.listen_address,
        Port: settings.port,
        Logger: logger,
        # WEBrick's own access log is off; ours is written in #access_log.
        AccessLog: [],
        # How long WEBrick waits for the next request on a kept-alive
        # connection (polling every 0.5 s, so that a shutdown is noticed),
        # and for each line or body read of a request (408 after it).
        RequestTimeout: settings.keepalive_timeout,
        MaxClients: MAX_CLIENTS,
        DoNotReverseLookup: true,
        # Runs in the connection's thread on each accepted socket, before
        # the first request is read.
        AcceptCallback: ->(sock) { sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, nodelay) }
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
      super
    end

    # The server-wide "OPTIONS *": WEBrick answers 200 with this Allow.
    def do_OPTIONS(_req, res)
      res["Allow"] = Servlets::ALLOW
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

    # Reads (and drops) the request body before the route answers. WEBrick
    # would read it only after the response is built and close the
    # connection if that failed, behind a response that announced
    # keep-alive. A body that cannot be read (unknown transfer coding, bad
    # chunk, POST or PUT without Content-Length, which WEBrick refuses)
    # makes the response say "Connection: close" instead.
    def read_body(req, res)
      req.body { |_chunk| nil }
    rescue WEBrick::HTTPStatus::Status => e
      @logger.debug("request body: #{e.class}")
      res.keep_alive = false
    end
  end
end
