# frozen_string_literal: true

require "socket"
require "webrick"
require_relative "strict_request"

module Details
  module Serving
    # Prepended to the HTTPServer subclass: the configuration keys that bound
    # connections, the accept hook, strict request reading
    # (#create_request) and the body read before the route (#service).
    module Wire
      # Details serves no route that takes a body; a body is read (and
      # dropped) only to keep the connection usable, up to this size.
      MAX_BODY_BYTES = 1024 * 1024

      # WEBrick configuration keys from a Details::Config.
      def wire_config(settings)
        @limits = RequestLimits.new(header_timeout: settings.header_timeout,
                                    body_timeout: settings.keepalive_timeout, max_body_bytes: MAX_BODY_BYTES)
        @nodelay = settings.nodelay ? 1 : 0
        # TCP_USER_TIMEOUT in ms: Linux; elsewhere the option is left alone.
        @user_timeout_ms = settings.keepalive_timeout * 1000 if Socket.const_defined?(:TCP_USER_TIMEOUT)
        # RequestTimeout: how long WEBrick waits for the next request on a
        # kept-alive connection (polling every 0.5 s for a shutdown) and for
        # each read of a request (408). MaxClients: a thread per connection;
        # with all taken, new connections wait in the listen backlog.
        { RequestTimeout: settings.keepalive_timeout, MaxClients: settings.max_connections,
          AcceptCallback: ->(sock) { accepted(sock) } }
      end

      def create_request(webrick_config)
        StrictRequest.new(webrick_config, @limits)
      end

      # The body is read (and dropped) before the route answers: WEBrick
      # would read it only after the response is built and close the
      # connection if that failed, behind a response that announced
      # keep-alive. A body that is malformed, too large or too slow is
      # answered by WEBrick with the error (400, 413, 408) and a close; a
      # POST or PUT without a length (411 to WEBrick) gets the route's
      # answer with "Connection: close". During a drain every answer closes.
      def service(req, res)
        begin
          req.body { |_chunk| nil }
        rescue WEBrick::HTTPStatus::LengthRequired
          res.keep_alive = false
        end
        res.keep_alive = false unless status == :Running
        super
      end

      private

      # The AcceptCallback, in the connection's thread. The first head must
      # be complete within the header timeout of the accept (StrictRequest
      # reads that deadline from this thread); WEBrick would wait for its
      # first byte as long as for a kept-alive connection, so that wait is
      # here, in 0.5 s steps so that a drain closes a silent connection at
      # once. With nothing by the deadline the read side is shut down:
      # WEBrick sees end of file and closes without an answer.
      # TCP_USER_TIMEOUT bounds the one wait WEBrick puts no limit on: a
      # response written to a client that does not read.
      def accepted(sock)
        sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, @nodelay)
        sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_USER_TIMEOUT, @user_timeout_ms) if @user_timeout_ms
        deadline = StrictReader.now + @limits.header_timeout
        Thread.current[StrictRequest::FIRST_HEAD_DEADLINE] = deadline
        loop do
          left = deadline - StrictReader.now
          return sock.shutdown(Socket::SHUT_RD) unless left.positive?
          return if sock.wait_readable([left, 0.5].min) || status != :Running
        end
      rescue SystemCallError, IOError => e
        @logger.debug("accept: #{e.class}")
      end
    end
  end
end
