# frozen_string_literal: true

require "webrick"

module Details
  module Serving
    # The socket as StrictRequest hands it to HTTPRequest#parse: the calls
    # WEBrick makes on its socket (gets, read, eof?, <<, peeraddr, addr),
    # each checked against what may come next on the wire. Bytes come
    # through one buffer, filled with read_nonblock (which takes the socket's
    # buffered bytes first) against a deadline; what the buffer holds past
    # the head, and past each body line or block, goes back to the socket
    # with ungetbyte, where WEBrick's next read or next request finds it.
    class StrictReader
      LF = "\n"
      CRLF = "\r\n"
      # The most one read takes.
      READ = 8192
      # A control other than HTAB inside a line that ends with CRLF (NUL, CR,
      # VT, ESC, DEL...); the final CR and LF do not count.
      CTL = /[\x00-\x08\x0a-\x1f\x7f](?!\n?\z)/
      TOKEN = '[!\#$%&\'*+\-.^_`|~0-9A-Za-z]+'
      # method SP request-target [SP HTTP-version] CRLF; a line without a
      # version StrictRequest refuses once WEBrick has taken it.
      REQUEST_LINE = %r{\A#{TOKEN} [^\x00-\x20\x7f]+(?: HTTP/[0-9]\.[0-9])?\r\n\z}
      QUOTED = '"(?:[\t !#-\[\]-~]|\\\\[\t -~])*"'
      # chunk-size [chunk-ext] CRLF, RFC 9112 section 7.1; at most 16 hex digits.
      CHUNK_SIZE = /\A([0-9A-Fa-f]{1,16})(?:[ \t]*;[ \t]*#{TOKEN}(?:[ \t]*=[ \t]*(?:#{TOKEN}|#{QUOTED}))?)*\r\n\z/
      # Fields a trailer may not carry (RFC 9110 section 6.5.1).
      FORBIDDEN_TRAILER = /\A(?:content-length|transfer-encoding|host)[ \t]*:/i
      BODY_STATE = { none: :no_body, length: :length, chunked: :chunk_size }.freeze
      GONE = [Errno::ECONNRESET, Errno::EPIPE, Errno::ETIMEDOUT].freeze

      def self.now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # Why the request line is unacceptable, or nil.
      attr_reader :request_line_problem

      def initialize(io, head_deadline, max_body_bytes)
        @io = io
        @deadline = head_deadline
        @max_body_bytes = max_body_bytes
        @state = :request_line
        @body_bytes = 0
        @chunk_left = 0
        @buffer = "".b # bytes read, from @at on not yet handed out
        @at = 0
      end

      # Called once the head is parsed and checked: what the body is.
      def expect_body(kind, deadline)
        give_back
        @deadline = deadline
        @state = BODY_STATE.fetch(kind)
      end

      # WEBrick reads every line of the head, chunk sizes, the CRLF after
      # chunk data and trailers with gets(LF, limit).
      def gets(_separator = LF, limit = 4096)
        case @state
        when :request_line then request_line(line(limit))
        when :head
          bad(@request_line_problem) if @request_line_problem
          field_line(line(limit), limit, :head_done)
        when :chunk_size then chunk_size_line(body { line(limit) })
        when :chunk_end then chunk_end_line(body { line(limit) })
        when :trailer then field_line(body { line(limit) }, limit, :done)
        else bad("unexpected read of a line")
        end
      end

      # WEBrick reads a Content-Length body and chunk data with read(size).
      def read(size)
        case @state
        when :length then body { bytes(size) }
        when :chunk_data
          bad("chunk data read past its size") if size > @chunk_left
          data = body { bytes(size) }
          @chunk_left -= data.bytesize if data
          @state = :chunk_end if @chunk_left.zero?
          data
        else bad("unexpected read of body bytes")
        end
      end

      def eof?
        @io.eof?
      rescue SystemCallError, IOError
        true
      end

      def <<(data)
        @io << data
        self
      end

      def peeraddr(*args)
        @io.peeraddr(*args)
      end

      def addr(*args)
        @io.addr(*args)
      end

      private

      def request_line(line)
        @state = :head
        # A line WEBrick cannot use (cut at its limit, cut by EOF) it rejects
        # itself with 414 or 400; anything else not in the grammar is refused
        # at the next read (or by StrictRequest for a line without headers),
        # once WEBrick has taken the request line and can answer.
        @request_line_problem = "malformed request line" if line && !REQUEST_LINE.match?(line)
        line
      end

      # A header or trailer field line, or the blank line that ends them.
      def field_line(line, limit, state_after)
        bad("request ended before the blank line ending its head") if line.nil?
        unless line.end_with?(LF)
          bad("header line over #{limit - 2} bytes") if line.bytesize >= limit
          bad("request ended before the blank line ending its head")
        end
        bad("line not ended by CRLF") unless line.end_with?(CRLF)
        if line == CRLF
          @state = state_after
          return line
        end
        bad("obs-fold (a line starting with white space)") if line.start_with?(" ", "\t")
        bad("control character in a header line") if CTL.match?(line)
        bad("framing field in a trailer") if state_after == :done && FORBIDDEN_TRAILER.match?(line)
        line
      end

      def chunk_size_line(line)
        match = line && CHUNK_SIZE.match(line)
        bad("malformed chunk size line") unless match
        size = match[1].to_i(16)
        @body_bytes += size
        bad("chunked body over #{@max_body_bytes} bytes") if @body_bytes > @max_body_bytes
        @chunk_left = size
        @state = size.zero? ? :trailer : :chunk_data
        line
      end

      def chunk_end_line(line)
        bad("chunk data not followed by CRLF") unless line == CRLF
        @state = :chunk_size
        line
      end

      # A read of the body: what the buffer holds beyond it goes back.
      def body
        yield
      ensure
        give_back
      end

      def give_back
        @io.ungetbyte(take(@buffer.bytesize - @at)) if @at < @buffer.bytesize
        @buffer.clear
        @at = 0
      end

      # IO#gets(LF, limit): the line with its LF, or limit bytes without
      # one, or what came before EOF (nil for nothing).
      def line(limit)
        loop do
          at = @buffer.index(LF, @at)
          return take(at + 1 - @at) if at && at - @at < limit

          left = @buffer.bytesize - @at
          return take(limit) if left >= limit
          next if fill(READ)

          return left.zero? ? nil : take(left)
        end
      end

      # IO#read(size): size bytes, fewer at EOF, nil for none.
      def bytes(size)
        nil while @buffer.bytesize - @at < size && fill(size - (@buffer.bytesize - @at))
        data = take([size, @buffer.bytesize - @at].min)
        data.empty? && size.positive? ? nil : data
      end

      def take(size)
        data = @buffer.byteslice(@at, size)
        @at += size
        data
      end

      # One read of at most max bytes into the buffer, against the deadline;
      # false at EOF. Through one string per thread: a new one per read left
      # the heap fragmented after floods of slow heads.
      def fill(max)
        chunk = @io.read_nonblock([max, READ].min, Thread.current[:details_read] ||= "".b, exception: false)
        return false if chunk.nil?
        return wait if chunk == :wait_readable

        if @at.positive?
          @buffer = @buffer.byteslice(@at, @buffer.bytesize - @at)
          @at = 0
        end
        @buffer << chunk
        true
      rescue *GONE
        false
      end

      def wait
        left = @deadline - self.class.now
        return true if left.positive? && @io.wait_readable(left)

        raise WEBrick::HTTPStatus::RequestTimeout, "request not complete in time"
      end

      def bad(message)
        raise WEBrick::HTTPStatus::BadRequest, message
      end
    end
  end
end
