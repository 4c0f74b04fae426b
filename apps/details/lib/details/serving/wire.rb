# frozen_string_literal: true

require "socket"
require "webrick"
require_relative "strict_request"

module Details
  # What is not the details app: the wire rules of docs/contract.md enforced
  # through WEBrick's public extension points, the drain, memory after floods.
  module Serving
    # Prepended to the HTTPServer subclass: the configuration keys that bound
    # connections, the accept hook, strict request reading (#create_request),
    # the body read before the route (#service).
    module Wire
      MAX_BODY_BYTES = 1024 * 1024 # read (and dropped) only to keep a connection usable

      # WEBrick configuration keys from a Details::Config.
      def wire_config(settings)
        @limits = RequestLimits.new(header_timeout: settings.header_timeout,
                                    body_timeout: settings.keepalive_timeout, max_body_bytes: MAX_BODY_BYTES)
        @nodelay = settings.nodelay ? 1 : 0
        # TCP_USER_TIMEOUT in ms: Linux; elsewhere the option is left alone.
        @user_timeout_ms = settings.keepalive_timeout * 1000 if Socket.const_defined?(:TCP_USER_TIMEOUT)
        # RequestTimeout: the wait for a kept-alive connection's next request
        # and for each read (408). MaxClients: a thread per connection; with
        # all taken, new connections wait in the listen backlog.
        { RequestTimeout: settings.keepalive_timeout, MaxClients: settings.max_connections,
          AcceptCallback: ->(sock) { accepted(sock) } }
      end

      def create_request(webrick_config) = StrictRequest.new(webrick_config, @limits)

      # The GET and HEAD routes read no body: one sent with them is left
      # unread, and the connection closes after the route's answer. Other
      # methods (405) have the body read before the route answers (WEBrick
      # reads it after, and closes behind an answer that announced
      # keep-alive): a bad one is 400, 413 or 408 and a close; one without a
      # length gets the route's answer and a close. In a drain every answer
      # closes.
      def service(req, res)
        if %w[GET HEAD].include?(req.request_method)
          res.keep_alive = false if req["content-length"].to_i.positive? || req["transfer-encoding"]
        else
          read_body(req, res)
        end
        res.keep_alive = false unless status == :Running
        super
      end

      private

      def read_body(req, res)
        req.body { |_chunk| nil }
      rescue WEBrick::HTTPStatus::LengthRequired
        res.keep_alive = false
      end

      # The AcceptCallback, in the connection's thread. The first head is due
      # within the header timeout of the accept (StrictRequest reads that
      # deadline from this thread), so the wait for its first byte is here,
      # in 0.5 s steps for a drain; with nothing by then the read side shuts
      # and WEBrick closes without an answer. TCP_USER_TIMEOUT bounds a
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
